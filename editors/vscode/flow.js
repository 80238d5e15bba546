// Flow control in the editor: while a takt debug session runs, the values each line of one POU
// read and wrote the last time its task ran it, drawn after the line and refreshed twice a second
// (the takt debug adapter's flowControl and flowValues requests). Lines the task did not run in
// that cycle show nothing.
'use strict';

const kRefreshMs = 500;

// The text drawn after one line of a flowValues answer: `x = 5` for a value read, `y := 6` for
// one written, and how often the line ran when more than once.
function flowText(line) {
  const parts = line.values.map((v) => (v.access === 'write' ? `${v.name} := ${v.value}` : `${v.name} = ${v.value}`));
  if (line.count > 1) parts.push(`(${line.count}×)`);
  return parts.length > 0 ? parts.join('   ') : '✓';
}

class FlowView {
  constructor(vscode) {
    this.vscode = vscode;
    this.decoration = vscode.window.createTextEditorDecorationType({
      after: { color: new vscode.ThemeColor('editorCodeLens.foreground'), margin: '0 0 0 2em' },
    });
    this.session = undefined;
    this.timer = undefined;
    this.lines = [];
    this.starting = false;
  }

  // On for the POU of the cursor's line in the active editor, or off when it is on.
  async toggle() {
    const { vscode } = this;
    if (this.starting) return; // a toggle already on its way
    if (this.session) {
      await this.stop(true);
      return;
    }
    const session = vscode.debug.activeDebugSession;
    const editor = vscode.window.activeTextEditor;
    if (!session || session.type !== 'takt') {
      vscode.window.showErrorMessage('takt: flow control needs a takt debug session: launch or attach first');
      return;
    }
    if (!editor || editor.document.uri.scheme !== 'file') {
      vscode.window.showErrorMessage('takt: put the cursor in the POU to watch');
      return;
    }
    let answer;
    this.starting = true;
    try {
      answer = await session.customRequest('flowControl', {
        source: { path: editor.document.uri.fsPath },
        line: editor.selection.active.line + 1,
      });
    } catch (e) {
      vscode.window.showErrorMessage(`takt: flow control: ${e.message}`);
      return;
    } finally {
      this.starting = false;
    }
    this.session = session;
    this.timer = setInterval(() => this.refresh(), kRefreshMs);
    vscode.window.setStatusBarMessage(`takt: flow control on ${answer.pou}`, 3000);
    await this.refresh();
  }

  async refresh() {
    const session = this.session;
    if (!session) return;
    let lines;
    try {
      lines = (await session.customRequest('flowValues')).lines;
    } catch {
      lines = []; // halted elsewhere, reloading: the next refresh tells
    }
    if (this.session !== session) return; // turned off (or on again) meanwhile: not these values
    this.lines = lines;
    this.draw();
  }

  draw() {
    const { vscode } = this;
    for (const editor of vscode.window.visibleTextEditors) {
      const file = editor.document.uri.fsPath;
      const ranges = this.lines
        .filter((l) => l.source.path === file && l.line >= 1 && l.line <= editor.document.lineCount)
        .map((l) => {
          const end = editor.document.lineAt(l.line - 1).range.end;
          return { range: new vscode.Range(end, end), renderOptions: { after: { contentText: flowText(l) } } };
        });
      editor.setDecorations(this.decoration, ranges);
    }
  }

  // Off: the runtime is told (unless the session is gone) and the values go.
  async stop(tell) {
    const session = this.session;
    this.session = undefined;
    clearInterval(this.timer);
    this.timer = undefined;
    this.lines = [];
    this.draw();
    if (tell && session) {
      try {
        await session.customRequest('flowControl', {});
      } catch {
        // the session ended meanwhile: flow control ended with it
      }
    }
  }

  sessionEnded(session) {
    if (this.session && session.id === this.session.id) this.stop(false);
  }
}

module.exports = { FlowView, flowText };
