import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  api,
  hasShared,
  REPO_ROOT,
  type RunningServer,
  SHARED,
  startServer,
} from '../integration/support/local-server.ts';
import { eu1WithPixelatedPlate } from '../support/pixelated-plate.ts';
import { hasChromium, launchBrowser, loopbackOnlyContext, noChromiumReason } from './browser.ts';

/** `npm run screenshots` writes them into docs/img for the README; a plain test run keeps the tree clean. */
const SCREENSHOTS = path.resolve(REPO_ROOT, process.env.PHOTO_JOBS_SCREENSHOTS ?? '.cache/e2e-screenshots');
const plateOf = (file: string) => path.join(SHARED, 'eval', 'plates', file);

if (!hasChromium) console.warn(noChromiumReason);
if (!hasShared) console.warn('e2e skipped: no ../shared/eval photos beside the repository');

/** Drops a photo on the drop zone as a user's drag from the desktop does (a `drop` event with the file). */
async function dropPhoto(page: Page, file: string) {
  const dataTransfer = await page.evaluateHandle(
    `(() => {
      const bytes = Uint8Array.from(atob('${(await readFile(file)).toString('base64')}'), (c) => c.charCodeAt(0));
      const transfer = new DataTransfer();
      transfer.items.add(new File([bytes], '${path.basename(file)}', { type: 'image/jpeg' }));
      return transfer;
    })()`,
  );
  await page.dispatchEvent('#drop-zone', 'dragenter', { dataTransfer });
  await page.dispatchEvent('#drop-zone', 'drop', { dataTransfer });
}

describe.skipIf(!hasChromium || !hasShared)('web console in Chromium', () => {
  let server: RunningServer;
  let browser: Browser;
  let refused: string[] = [];
  let page: Page;

  beforeAll(async () => {
    [server, browser] = await Promise.all([startServer(), launchBrowser()]);
    const context = await loopbackOnlyContext(browser);
    refused = context.refused;
    page = await context.context.newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    // Nothing the pages loaded came from off this machine.
    expect(refused).toEqual([]);
  });

  const openConsole = async (key: string) => {
    await page.goto(`${server.origin}/`);
    await page.getByLabel('API key').fill(key);
    await page.getByLabel('API key').dispatchEvent('change');
  };

  it('hides the plate of a dropped photo, shows the result and takes 5 credits', async () => {
    const key = await server.createKey(100);
    await openConsole(key);
    await expect.poll(() => page.locator('#credits').textContent()).toBe('Credits left: 100');
    await page.getByLabel('Mode').selectOption('plate');
    await dropPhoto(page, plateOf('eu/eu1.jpg'));
    await expect(
      page
        .getByLabel('Photos')
        .evaluate((input) => (input as unknown as { files: { length: number } }).files.length),
    ).resolves.toBe(1);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'console-1-form.png') });
    await page.getByRole('button', { name: 'Process' }).click();

    const result = page.getByRole('img', { name: /^Result/ });
    await result.waitFor({ state: 'visible', timeout: 90_000 });
    await expect
      .poll(() => result.evaluate((image) => (image as unknown as { naturalWidth: number }).naturalWidth))
      .toBeGreaterThan(0);
    await expect.poll(() => page.locator('#credits').textContent()).toBe('Credits left: 95');
    await expect(page.locator('.card .status').first().textContent()).resolves.toBe('success');
    await expect(page.locator('.card .card-credits').first().textContent()).resolves.toBe('Credits left: 95');
    // The comparison opens on the result, its sides named, a divider between them once the slider moves.
    await expect(page.getByLabel('Before / after').inputValue()).resolves.toBe('100');
    await expect(page.locator('.card .after-tag').first().isVisible()).resolves.toBe(true);
    await expect(page.locator('.card .plate-warning').first().isVisible()).resolves.toBe(false);
    // The plate the job reports is outlined on the result, and the toggle takes the outline away.
    const outlines = page.locator('.card .plate-outlines').first();
    await expect.poll(() => outlines.locator('polygon').count()).toBe(1);
    await expect(outlines.isVisible()).resolves.toBe(true);
    await page.getByLabel('Outline plates').uncheck();
    await expect(outlines.isVisible()).resolves.toBe(false);
    await page.getByLabel('Outline plates').check();
    await page.getByLabel('Before / after').fill('70');
    await expect(page.locator('.card .before-tag').first().isVisible()).resolves.toBe(true);
    await expect(page.locator('.card .divider').first().isVisible()).resolves.toBe(true);
    // The tab has an icon: the page links one that is served.
    const icon = await page.locator('link[rel="icon"]').getAttribute('href');
    expect((await fetch(new URL(icon!, server.origin))).status).toBe(200);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'console-2-result.png') });
  });

  it('flags a studio result whose car still shows a plate it did not hide', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'photo-jobs-e2e-'));
    try {
      const photo = path.join(dir, 'pixelated-plate.jpg');
      await writeFile(photo, await eu1WithPixelatedPlate(await readFile(plateOf('eu/eu1.jpg'))));
      await openConsole(await server.createKey(20));
      await page.getByLabel('Mode').selectOption('studio_background');
      await page.getByLabel('Photos').setInputFiles(photo);
      await page.getByRole('button', { name: 'Process' }).click();
      await expect
        .poll(() => page.locator('.card .status').first().textContent(), { timeout: 180_000 })
        .toBe('success');
      await expect(page.locator('.card .plate-warning').first().isVisible()).resolves.toBe(true);
      await expect(page.locator('.card .plate-warning-text').first().textContent()).resolves.toMatch(
        /No plate was hidden.*require_plate/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 240_000);

  it('shows the service’s own 401 message for a wrong key', async () => {
    const wrongKey = 'pjk_not_a_key_of_this_server_000000';
    const expected = await api(server, wrongKey).get('/quota');
    expect(expected.status).toBe(401);
    await openConsole(wrongKey);
    await page.getByLabel('Photos').setInputFiles(plateOf('br/AYO9034.jpg'));
    await page.getByRole('button', { name: 'Process' }).click();
    const alert = page.locator('.card .error').first();
    await alert.waitFor({ state: 'visible' });
    expect(await alert.textContent()).toBe(expected.body.message);
  });

  it('runs a guest trial job when the key is left empty, with the analysis as readable labels', async () => {
    await openConsole('');
    await expect.poll(() => page.locator('#credits').textContent()).toMatch(/^Guest trial/);
    await page.getByLabel('Mode').selectOption('analyze');
    await page.getByLabel('Photos').setInputFiles(plateOf('br/AYO9034.jpg'));
    await page.getByRole('button', { name: 'Process' }).click();
    await expect
      .poll(() => page.locator('.card .status').first().textContent(), { timeout: 60_000 })
      .toBe('success');
    await expect(page.locator('.card .analysis').first().textContent()).resolves.toMatch(
      /Photo type\s*Exterior \(\d+% confident\)/,
    );
    await expect.poll(() => page.locator('#credits').textContent()).toMatch(/^Credits left: \d+$/);
  });

  it('renders the API reference with the /jobs operations and their examples', async () => {
    await page.goto(`${server.origin}/docs`);
    const create = page.locator('.opblock-post', {
      has: page.locator('.opblock-summary-path', { hasText: /^\/api\/v1\/jobs$|^\/jobs$/ }),
    });
    await create.waitFor({ state: 'visible', timeout: 30_000 });
    await create.locator('.opblock-summary').first().click();
    // The request example of the spec's POST /jobs, and the 202 envelope it answers.
    const example = create.getByText('images.example.com/cars/estate-front.jpg').first();
    await example.waitFor({ timeout: 30_000 });
    await example.scrollIntoViewIfNeeded();
    await expect(create.getByText('job_7kq2m9x4c8v1b6n3p5r0t2wz').count()).resolves.toBeGreaterThan(0);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'docs.png') });
  });

  it('makes a transparent cut-out as WEBP at the width asked, from the form’s options', async () => {
    await openConsole(await server.createKey(5));
    await page.getByLabel('Mode').selectOption('studio_background');
    await page.getByLabel('Background', { exact: true }).selectOption('transparent');
    await page.getByLabel('Format').selectOption('webp');
    await page.getByLabel('Max width (px)').fill('480');
    await page.getByLabel('Photos').setInputFiles(plateOf('eu/eu1.jpg'));
    await page.getByRole('button', { name: 'Process' }).click();
    const result = page.getByRole('img', { name: /^Result/ }).first();
    await result.waitFor({ state: 'visible', timeout: 120_000 });
    await expect
      .poll(() => result.evaluate((image) => (image as unknown as { naturalWidth: number }).naturalWidth), {
        timeout: 30_000,
      })
      .toBe(480);
    const src = await result.getAttribute('src');
    expect(src).toMatch(/result\.webp$/);
  });

  it('runs a ZIP of three photos as a batch and shows its progress to the end', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'photo-jobs-e2e-'));
    const archive = path.join(dir, 'three-cars.zip');
    try {
      await promisify(execFile)('python3', [
        '-m',
        'zipfile',
        '-c',
        archive,
        plateOf('eu/eu3.jpg'),
        plateOf('us/0b86cecf-67d1-4fc0-87c9-b36b0ee228bb.jpg'),
        plateOf('br/FZB9581.jpg'),
      ]);
      await openConsole(await server.createKey(100));
      await page.getByLabel('Mode').selectOption('plate');
      await page.getByLabel('Photos').setInputFiles(archive);
      await page.getByRole('button', { name: 'Process' }).click();
      const progress = page.getByRole('progressbar');
      await progress.waitFor({ state: 'visible' });
      await expect
        .poll(() => page.locator('.batch .status').first().textContent(), { timeout: 120_000 })
        .toBe('completed');
      expect(
        await progress.evaluate((bar) => {
          const { value, max } = bar as unknown as { value: number; max: number };
          return [value, max];
        }),
      ).toEqual([3, 3]);
      await expect(page.locator('.batch .counts').first().textContent()).resolves.toMatch(/^3 of 3 done/);
      const downloaded = page.waitForEvent('download');
      await page.getByRole('link', { name: 'Download results' }).click();
      const zip = await readFile((await (await downloaded).path())!);
      expect(zip.subarray(0, 2).toString()).toBe('PK');
      // Saved under the archive's own name, not the batch id.
      expect((await downloaded).suggestedFilename()).toBe('three-cars-results.zip');
      await page
        .locator('.batch')
        .first()
        .screenshot({ path: path.join(SCREENSHOTS, 'console-3-batch.png') });

      // A ZIP in a mode batches do not take is refused with the modes they do take, nothing charged.
      await page.getByLabel('Mode').selectOption('analyze');
      await page.getByLabel('Photos').setInputFiles(archive);
      await page.getByRole('button', { name: 'Process' }).click();
      const refusal = page.locator('.batch .error').first();
      await refusal.waitFor({ state: 'visible' });
      expect(await refusal.textContent()).toMatch(/analyze is not accepted for batches.*plate, background/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
