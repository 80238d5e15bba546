// Saves docs/img/web.png (the README's picture): the live page on the running demo, logged in as
// an engineer, with the tank level and the pump in the trend and one online change. `node screenshot.mjs [OUT]`.
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { ENGINEER_TOKEN, launchBrowser, openPage, repo, showVariable, sleep, startDemo } from './support.mjs';

const out = process.argv[2] ?? path.join(repo, 'docs/img/web.png');
const demo = await startDemo();
const browser = await launchBrowser();
try {
  const { page } = await openPage(browser, demo.url, ENGINEER_TOKEN);
  await page.selectOption('#window', '30');
  for (const name of ['gTankLevel', 'Line.Tank.Pump', 'Line.Belt.Run']) {
    const row = await showVariable(page, name);
    await row.locator('input.trend').check();
  }
  await page.fill('#search', 'Line.Tank');
  await sleep(10000);
  // An online change, for the history.
  appendFileSync(path.join(demo.dir, 'src/tank.st'), '\nFUNCTION OnlineChangeMarker : INT\nOnlineChangeMarker := 7;\nEND_FUNCTION\n');
  await demo.takt('reload');
  await sleep(10000); // a trend worth looking at
  await page.screenshot({ path: out, fullPage: true });
  console.log(`saved ${out}`);
} finally {
  await browser.close();
  await demo.stop();
}
