// The numbers the page's trends draw from IEC literal text (web/src/literal.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { numeric } from '../../web/src/literal.js';

test('numbers, booleans and bit strings', () => {
  assert.equal(numeric('42'), 42);
  assert.equal(numeric('-1.5'), -1.5);
  assert.equal(numeric('84.32075'), 84.32075);
  assert.equal(numeric('TRUE'), 1);
  assert.equal(numeric('FALSE'), 0);
  assert.equal(numeric('16#00FF'), 255);
  assert.equal(numeric('2#1010_0001'), 161);
  assert.equal(numeric('8#17'), 15);
  assert.equal(numeric('INT#-7'), -7);
});

test('durations in milliseconds', () => {
  assert.equal(numeric('T#330ms'), 330);
  assert.equal(numeric('T#1m30s'), 90000);
  assert.equal(numeric('T#-2s'), -2000);
  assert.equal(numeric('LTIME#5us'), 0.005);
  assert.equal(numeric('T#1d2h'), 93600000);
});

test('what is not a number is not drawn', () => {
  assert.equal(numeric("'text'"), null);
  assert.equal(numeric('E_Mode#Auto'), null);
  assert.equal(numeric('(a := 1, b := 2)'), null);
  assert.equal(numeric('D#2024-01-15'), null);
});
