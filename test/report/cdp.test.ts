import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkReportInBrowser } from '../../src/report/browser-check.js';
import { CdpBrowser } from '../../src/report/cdp.js';
import { tempDir } from '../helpers/cli.js';
import { barePage } from './fixture.js';

// No Chromium is needed: these are the ways a browser that cannot run fails.
describe('a Chromium that cannot run', () => {
  it('fails every command and wait at once with why, and close() returns (a missing binary)', async () => {
    const browser = CdpBrowser.launch(join(tempDir('plens-no-chromium-'), 'chromium'), []);
    await expect(browser.openPage()).rejects.toThrow(
      /Chromium could not be started \(spawn .*ENOENT\); install it \(apt-get install -y chromium\) or set PLENS_CHROMIUM/,
    );
    await expect(browser.waitFor(() => true)).rejects.toThrow(/could not be started/);
    await browser.close();
  });

  it('fails the browser check with that error, not after its render timeout (a file that is not a program)', async () => {
    const dir = tempDir('plens-no-chromium-');
    const notAProgram = join(dir, 'chromium');
    writeFileSync(notAProgram, 'not a program');
    chmodSync(notAProgram, 0o644);
    const page = join(dir, 'page.html');
    writeFileSync(page, barePage({ title: 'x' }));
    await expect(checkReportInBrowser(page, { chromium: notAProgram, timeoutMs: 600_000 })).rejects.toThrow(/Chromium could not be started \(spawn .*EACCES\)/);
  });

  it('leaves no unhandled rejection from a wait made ahead of a command that fails first', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const browser = CdpBrowser.launch(join(tempDir('plens-no-chromium-'), 'chromium'), []);
      // As the browser check does: the load event is waited for before navigating.
      const loaded = browser.waitFor((e) => e.method === 'Page.loadEventFired');
      await expect(browser.send('Page.navigate', { url: 'about:blank' })).rejects.toThrow(/could not be started/);
      await new Promise((r) => setTimeout(r, 50));
      expect(unhandled).toEqual([]);
      await expect(loaded).rejects.toThrow(/could not be started/);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('fails a wait already pending when Chromium exits (a program that exits at once)', async () => {
    const browser = CdpBrowser.launch('/bin/false', []);
    const waiting = browser.waitFor((e) => e.method === 'never');
    await expect(waiting).rejects.toThrow(/Chromium exited \(code 1\)/);
    await browser.close();
  });
});
