/**
 * Firefox and WebKit behind one small interface, for the engine lanes (the Chromium suite keeps
 * Playwright's): a page of a fresh profile, and a few things a visitor does in it, each in a
 * frame named by the path of `data-testid`s of the iframes that lead to it ([] is the page,
 * [MODAL] the modal, [MODAL, WALLET] the wallet frame inside it).
 *
 * - Firefox: puppeteer-core over WebDriver BiDi, the protocol Firefox speaks itself, so no
 *   driver binary; Debian's firefox-esr, a fresh profile per browser context.
 * - WebKit: selenium-webdriver (the Selenium project's client, no install script, nothing
 *   downloaded when given a server) speaking W3C WebDriver classic to Debian's WebKitWebDriver,
 *   which runs MiniBrowser under Xvfb; a fresh profile per session (MiniBrowser keeps an
 *   automation session's data apart, in memory). WebDriver classic runs one command at a time
 *   and switches frames per session, so every step here takes the page's lock.
 *
 * Both browsers reach Latch's names through the stack's forward proxy and accept its throwaway
 * certificate. Every wait has a timeout (ENGINE_WAIT_MS).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { HOST_ELEMENT_IDS } from '@latch/shared'
import type { Browser as PuppeteerBrowser, Frame as PuppeteerFrame } from 'puppeteer-core'
import { freePort, WAIT_MS, withTimeout } from '../harness.ts'

export type Engine = 'firefox' | 'webkit'

export const FIREFOX_PATH = '/usr/bin/firefox-esr'
export const WEBKIT_DRIVER_PATH = '/usr/bin/WebKitWebDriver'
/** Debian's webkit2gtk-driver puts MiniBrowser beside the engine's processes. */
export const MINIBROWSER_PATH = ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu']
  .map((dir) => `${dir}/webkit2gtk-4.1/MiniBrowser`)
  .find((path) => existsSync(path))
export const XVFB_PATH = '/usr/bin/Xvfb'

/** Why an engine cannot run here, or null when it can. */
export function missing(engine: Engine): string | null {
  if (engine === 'firefox') {
    return existsSync(FIREFOX_PATH)
      ? null
      : `${FIREFOX_PATH} is missing (apt-get install firefox-esr)`
  }
  const absent = [
    existsSync(WEBKIT_DRIVER_PATH) ? null : WEBKIT_DRIVER_PATH,
    MINIBROWSER_PATH ? null : 'MiniBrowser',
    existsSync(XVFB_PATH) ? null : XVFB_PATH,
  ].filter(Boolean)
  return absent.length === 0
    ? null
    : `${absent.join(', ')} missing (apt-get install webkit2gtk-driver xvfb)`
}

export const MODAL = HOST_ELEMENT_IDS.frame
export const WALLET = 'latch-wallet-frame'

export interface EnginePage {
  engine: Engine
  goto(url: string): Promise<void>
  /** Runs `fn` (self-contained) in the frame with `arg`; answers its JSON-able result. */
  run<T>(path: string[], fn: (arg: never) => T | Promise<T>, arg?: unknown): Promise<T>
  /**
   * Runs `fn` (self-contained) in the frame every POLL_MS for at most `ms`, as one command:
   * answers its first result other than null or undefined, or null when `ms` ran out. A wait
   * in the page, not a command per poll (see `waitIn`).
   */
  poll<T>(
    path: string[],
    fn: (arg: never) => T | null | undefined | Promise<T | null | undefined>,
    arg: unknown,
    ms: number,
  ): Promise<T | null>
  /**
   * Runs a script's source in the frame as the driver does (the page's CSP does not govern it):
   * axe-core's browser build, which then stays on the frame's window.
   */
  inject(path: string[], source: string): Promise<void>
  /** Waits until `css` matches an element that is displayed, in the frame. */
  waitFor(path: string[], css: string): Promise<void>
  click(path: string[], css: string): Promise<void>
  /** Types `text` into the (empty) field, as keystrokes. */
  type(path: string[], css: string, text: string): Promise<void>
  text(path: string[], css: string): Promise<string>
  /** The window this page opened (window.open), once it is there; its steps as a page's. */
  popup(): Promise<EnginePage>
  close(): Promise<void>
}

export interface EngineBrowser {
  engine: Engine
  /**
   * A page in a fresh profile: no cookies, no storage. `pageLoadStrategy: 'none'` (WebDriver's
   * capability; WebKit only, Firefox's client never waits for a load): the driver's commands do
   * not wait for the page's load first.
   */
  newPage(options?: { pageLoadStrategy?: 'none' }): Promise<EnginePage>
  close(): Promise<void>
}

/**
 * The lanes' bound for one wait: twice the Chromium specs' WAIT_MS. MiniBrowser and Firefox run
 * beside Xvfb and a forward proxy, as processes of their own, and on two cores busy with the rest
 * of the suite a frame's first paint there took longer than WAIT_MS; a bound, not a speed goal.
 */
const ENGINE_WAIT_MS = 2 * WAIT_MS

/**
 * How often a wait in the page checks its condition. The check runs inside the page, so a short
 * interval costs the browser a function call, not a WebDriver round trip.
 */
const POLL_MS = 50

/**
 * How long one in-page wait (`poll`) may hold the page: WebKit's session runs one command at a
 * time, so another step of the same page (the extension wallet's answers) waits up to this.
 */
const SLICE_MS = 1000

/**
 * The source of `poll`'s in-page loop around `fn`, evaluated by the driver as a script (a
 * WebDriver script, which the frame's CSP does not govern; no eval in the page).
 */
function pollSource(fn: (arg: never) => unknown, arg: unknown, ms: number): string {
  return `(async (arg) => {
    const check = (${fn.toString()});
    const end = Date.now() + ${Math.max(0, Math.floor(ms))};
    for (;;) {
      let value = null;
      try { value = await check(arg); } catch (e) { value = null; }
      if (value !== null && value !== undefined) return value;
      if (Date.now() >= end) return null;
      await new Promise((r) => setTimeout(r, ${POLL_MS}));
    }
  })(${JSON.stringify(arg ?? null)})`
}

/**
 * Polls `check` until it answers a value other than undefined, within ENGINE_WAIT_MS. For a
 * condition in a page use `waitIn`, which waits in the page between checks.
 */
async function until<T>(
  what: string,
  check: () => Promise<T | undefined>,
  intervalMs = 100,
): Promise<T> {
  const started = Date.now()
  let last: unknown
  for (;;) {
    try {
      const value = await check()
      if (value !== undefined) return value
    } catch (e) {
      last = e
    }
    if (Date.now() - started > ENGINE_WAIT_MS) {
      throw new Error(`${what}: not within ${ENGINE_WAIT_MS} ms${last ? ` (${String(last)})` : ''}`)
    }
    await new Promise((r) => setTimeout(r, intervalMs))
  }
}

/**
 * Waits until `fn(arg)` answers a value other than null or undefined in the frame at `path`,
 * within `ms` (ENGINE_WAIT_MS by default): the page checks every POLL_MS itself, and this
 * process asks again only after each slice of SLICE_MS (or when the frame was not there yet,
 * or navigated away during a slice).
 */
export async function waitIn<T>(
  page: Pick<EnginePage, 'poll'>,
  what: string,
  path: string[],
  fn: (arg: never) => T | null | undefined | Promise<T | null | undefined>,
  arg?: unknown,
  ms = ENGINE_WAIT_MS,
): Promise<T> {
  const started = Date.now()
  let last: unknown
  for (;;) {
    const left = ms - (Date.now() - started)
    try {
      const value = await page.poll(path, fn, arg ?? null, Math.min(SLICE_MS, Math.max(left, 0)))
      if (value !== null && value !== undefined) return value
    } catch (e) {
      last = e
      await new Promise((r) => setTimeout(r, POLL_MS))
    }
    if (Date.now() - started > ms) {
      throw new Error(`${what}: not within ${ms} ms${last ? ` (${String(last)})` : ''}`)
    }
  }
}

/**
 * True when an element `css` matches is displayed (has a box, not hidden by style), else null
 * (not yet, for `poll`). Runs in the page; self-contained.
 */
function displayedMatch(css: string): true | null {
  return Array.from(document.querySelectorAll(css)).some((el) => {
    const style = getComputedStyle(el)
    const box = el.getBoundingClientRect()
    return (
      style.visibility !== 'hidden' && style.display !== 'none' && box.width > 0 && box.height > 0
    )
  })
    ? true
    : null
}

/** Waits until `css` matches a displayed element in the frame at `path` of `page`. */
const shownIn = (page: Pick<EnginePage, 'poll'>, path: string[], css: string) =>
  waitIn(page, `${css} shown in ${path.join(' > ') || 'the page'}`, path, displayedMatch, css)

// ---- Firefox -----------------------------------------------------------------------------

export async function launchFirefox(proxyPort: number): Promise<EngineBrowser> {
  const { launch } = await import('puppeteer-core')
  const browser: PuppeteerBrowser = await withTimeout(
    launch({
      browser: 'firefox',
      executablePath: FIREFOX_PATH,
      headless: true,
      acceptInsecureCerts: true,
      // Puppeteer's own launch bound (30 s by default) would end the wait before the lane's.
      timeout: 60_000,
      protocolTimeout: 60_000,
      extraPrefsFirefox: {
        'network.proxy.type': 1,
        'network.proxy.ssl': '127.0.0.1',
        'network.proxy.ssl_port': proxyPort,
        'network.proxy.http': '127.0.0.1',
        'network.proxy.http_port': proxyPort,
        'network.proxy.no_proxies_on': '',
        'network.proxy.allow_hijacking_localhost': true,
        // A site's own DNS over HTTPS would go around the proxy.
        'network.trr.mode': 5,
      },
    }),
    60_000,
    'launching Firefox',
  )
  return {
    engine: 'firefox',
    async newPage() {
      const context = await browser.createBrowserContext()
      const page = await context.newPage()
      page.setDefaultTimeout(WAIT_MS)
      /** The page's frame and each frame of `path` within it, outermost first. */
      const framesOn = async (path: string[]): Promise<PuppeteerFrame[]> => {
        const frames = [page.mainFrame()]
        for (const id of path) {
          const el = await frames[frames.length - 1]?.waitForSelector(
            `iframe[data-testid="${id}"]`,
            { timeout: WAIT_MS },
          )
          const inner = await el?.contentFrame()
          if (!inner) throw new Error(`no frame ${id}`)
          frames.push(inner)
        }
        return frames
      }
      const frameOf = async (path: string[]): Promise<PuppeteerFrame> =>
        (await framesOn(path)).at(-1) ?? page.mainFrame()
      /**
       * Where the centre of `css` in the frame at `path` is in the page's viewport: its box in
       * its frame, moved by the content box of each frame that holds it, each read by that
       * frame's own script after all of them scrolled it into view (a frame scrolled later could
       * move an outer one). Not Puppeteer's clickable point: it finds a frame's element through
       * WebDriver BiDi's `context` locator, which Firefox ESR 140 does not have.
       */
      const pointOf = async (path: string[], css: string): Promise<{ x: number; y: number }> => {
        const steps = (await framesOn(path)).map((frame, depth) => {
          const id = path[depth]
          return { frame, css: id === undefined ? css : `iframe[data-testid="${id}"]` }
        })
        for (const step of steps) {
          await step.frame.evaluate((c) => {
            document.querySelector(c)?.scrollIntoView({ block: 'center', inline: 'center' })
          }, step.css)
        }
        let x = 0
        let y = 0
        for (const step of steps) {
          const at = await step.frame.evaluate((c) => {
            const el = document.querySelector(c)
            if (!el) return null
            const box = el.getBoundingClientRect()
            if (!(el instanceof HTMLIFrameElement)) {
              return { x: box.left + box.width / 2, y: box.top + box.height / 2 }
            }
            const style = getComputedStyle(el)
            return {
              x: box.left + el.clientLeft + Number.parseFloat(style.paddingLeft),
              y: box.top + el.clientTop + Number.parseFloat(style.paddingTop),
            }
          }, step.css)
          if (!at) throw new Error(`no ${step.css} to click`)
          x += at.x
          y += at.y
        }
        return { x, y }
      }
      // The page's steps; `shown` waits for an element through the page's own `poll`.
      const self: EnginePage = {
        engine: 'firefox',
        async goto(url) {
          await page.goto(url, { waitUntil: 'load', timeout: WAIT_MS * 2 })
        },
        run: async <T>(path: string[], fn: (arg: never) => T | Promise<T>, arg?: unknown) => {
          const frame = await frameOf(path)
          const value: unknown = await frame.evaluate(fn as (arg: unknown) => unknown, arg ?? null)
          return value as T
        },
        poll: async <T>(
          path: string[],
          fn: (arg: never) => T | null | undefined | Promise<T | null | undefined>,
          arg: unknown,
          ms: number,
        ) => {
          const frame = await frameOf(path)
          // A string is evaluated as a script (WebDriver BiDi), so the frame's CSP allows it.
          const value: unknown = await frame.evaluate(pollSource(fn, arg, ms))
          return (value ?? null) as T | null
        },
        inject: async (path, source) => {
          const frame = await frameOf(path)
          await frame.evaluate(source)
        },
        waitFor: async (path, css) => {
          await shownIn(self, path, css)
        },
        async click(path, css) {
          await shownIn(self, path, css)
          const { x, y } = await pointOf(path, css)
          await page.mouse.click(x, y)
        },
        async type(path, css, text) {
          await shownIn(self, path, css)
          const frame = await frameOf(path)
          const el = await frame.$(css)
          if (!el) throw new Error(`no ${css}`)
          await el.focus()
          await page.keyboard.type(text)
        },
        async text(path, css) {
          await shownIn(self, path, css)
          const frame = await frameOf(path)
          return frame.$eval(css, (e) => e.textContent ?? '')
        },
        popup: () => {
          throw new Error('no Firefox lane opens a window')
        },
        close: () => context.close(),
      }
      return self
    },
    close: () => withTimeout(browser.close(), 20_000, 'closing Firefox'),
  }
}

// ---- WebKit ------------------------------------------------------------------------------

/** Starts Xvfb on a free display; answers it and its stop. */
async function startXvfb(): Promise<{ display: string; stop(): Promise<void> }> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const n = 90 + Math.floor(Math.random() * 400)
    if (existsSync(`/tmp/.X11-unix/X${n}`) || existsSync(`/tmp/.X${n}-lock`)) continue
    const child = spawn(XVFB_PATH, [`:${n}`, '-screen', '0', '1280x900x24', '-nolisten', 'tcp'], {
      stdio: 'ignore',
    })
    // A failed start shows as the wait below running out, not as an uncaught 'error'.
    child.on('error', () => {})
    const up = await until(`Xvfb :${n}`, async () =>
      child.exitCode !== null ? false : existsSync(`/tmp/.X11-unix/X${n}`) ? true : undefined,
    )
    if (up) return { display: `:${n}`, stop: () => stopChild(child) }
  }
  throw new Error('Xvfb did not start on a free display')
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
    child.once('exit', () => {
      clearTimeout(timer)
      resolve()
    })
    child.kill('SIGTERM')
  })
}

/**
 * How long one MiniBrowser session may take to start, and how many drivers try. A start takes
 * under a second, a few seconds on a loaded machine; a stuck one never finishes, and would
 * take the test's whole 60 s with it. A start not done by then is taken as stuck: its driver
 * (and the MiniBrowser it launched) is stopped and a new driver tries, all of it within a
 * test's 60 s.
 */
const SESSION_START_MS = 15_000
const SESSION_START_TRIES = 3

/** A session and its driver: a new driver after each start that did not finish in time. */
export async function startSession<S, D>(
  start: (server: S) => Promise<D>,
  reuse: () => S | undefined,
  launch: () => Promise<S>,
  stop: (server: S) => Promise<void>,
  { ms = SESSION_START_MS, tries = SESSION_START_TRIES } = {},
): Promise<{ server: S; session: D }> {
  for (let attempt = 1; ; attempt++) {
    const server = reuse() ?? (await launch())
    const session = start(server)
    try {
      return {
        server,
        session: await withTimeout(session, ms, 'starting a MiniBrowser session'),
      }
    } catch (error) {
      // The session's own answer, if it ever comes, is for a driver that is gone.
      session.catch(() => {})
      await stop(server)
      if (attempt >= tries) {
        throw new Error(`${tries} MiniBrowser sessions did not start`, {
          cause: error,
        })
      }
    }
  }
}

export async function launchWebKit(proxyPort: number): Promise<EngineBrowser> {
  const { Builder, By } = await import('selenium-webdriver')
  const xvfb = await startXvfb()
  // WebKitWebDriver holds one session at a time: a driver per open page (a profile each). A
  // driver whose session has ended serves the next page (its MiniBrowser is a new one, a fresh
  // profile), so the driver starts once per page open at the same time, not once per page.
  const drivers = new Set<ChildProcess>()
  const idle: { port: number; child: ChildProcess }[] = []
  const reuseDriver = () => {
    for (let server = idle.pop(); server; server = idle.pop()) {
      if (server.child.exitCode === null && server.child.signalCode === null) return server
      drivers.delete(server.child)
    }
    return undefined
  }
  const startDriver = async () => {
    const port = await freePort()
    const child = spawn(WEBKIT_DRIVER_PATH, [`--port=${port}`], {
      stdio: 'ignore',
      // MiniBrowser inherits it. Xvfb has no GPU: accelerated compositing would run on Mesa's
      // software OpenGL, at a large CPU cost; the pages' cookies, storage, frames, focus and
      // events, which the lane proves, do not depend on how layers are painted
      // (docs/performance.md, "The WebKit lane without accelerated compositing").
      env: { ...process.env, DISPLAY: xvfb.display, WEBKIT_DISABLE_COMPOSITING_MODE: '1' },
    })
    child.on('error', () => {})
    drivers.add(child)
    try {
      await until('WebKitWebDriver', async () =>
        (await fetch(`http://127.0.0.1:${port}/status`)
          .then((r) => r.ok)
          .catch(() => false))
          ? true
          : undefined,
      )
    } catch (e) {
      await stopChild(child)
      throw e
    }
    return { port, child }
  }
  const sessions = new Set<{ quit(): Promise<void> }>()
  return {
    engine: 'webkit',
    async newPage(options) {
      const start = (server: { port: number }) =>
        new Builder()
          .usingServer(`http://127.0.0.1:${server.port}`)
          .withCapabilities({
            browserName: 'MiniBrowser',
            acceptInsecureCerts: true,
            ...options,
            // MiniBrowser's own flags: WebDriver's proxy capability names no scheme for the
            // proxy itself, and WebKitGTK then speaks TLS to it. Its cookie policy stays the
            // default, no-third-party.
            'webkitgtk:browserOptions': {
              binary: MINIBROWSER_PATH,
              args: [
                '--automation',
                `--proxy=http://127.0.0.1:${proxyPort}`,
                '--ignore-tls-errors',
              ],
            },
          })
          .build()
      const { server, session: driver } = await startSession(
        start,
        reuseDriver,
        startDriver,
        (stuck) => {
          drivers.delete(stuck.child)
          return stopChild(stuck.child)
        },
      )
      sessions.add(driver)
      await driver.manage().setTimeouts({ script: WAIT_MS, pageLoad: WAIT_MS * 2 })
      // One command at a time, and the frame a command runs in is the session's.
      let lock: Promise<unknown> = Promise.resolve()
      const locked = <T>(work: () => Promise<T>): Promise<T> => {
        const next = lock.then(work, work)
        lock = next.catch(() => {})
        return next
      }
      // The window each command runs in: the page's own, or a window it opened (popup()).
      const main: string = await driver.getWindowHandle()
      let windowNow = main
      const enter = async (path: string[], handle = main) => {
        if (windowNow !== handle) {
          await driver.switchTo().window(handle)
          windowNow = handle
        }
        await driver.switchTo().defaultContent()
        for (const id of path) {
          const [frame] = await driver.findElements(By.css(`iframe[data-testid="${id}"]`))
          if (!frame) throw new Error(`no frame ${id}`)
          await driver.switchTo().frame(frame)
        }
      }
      /** The steps a visitor takes in the window `handle`. */
      const steps = (handle: string) => {
        const page: Pick<EnginePage, 'run' | 'poll'> = {
          run: <T>(path: string[], fn: (arg: never) => T | Promise<T>, arg?: unknown) =>
            locked(async () => {
              await enter(path, handle)
              return driver.executeScript(
                `return (${fn.toString()})(arguments[0])`,
                arg ?? null,
              ) as Promise<T>
            }),
          poll: <T>(
            path: string[],
            fn: (arg: never) => T | null | undefined | Promise<T | null | undefined>,
            arg: unknown,
            ms: number,
          ) =>
            locked(async () => {
              await enter(path, handle)
              const value = (await driver.executeScript(
                `return ${pollSource(fn, arg, ms)}`,
              )) as T | null
              return value ?? null
            }),
        }
        const shown = (path: string[], css: string) => shownIn(page, path, css)
        return {
          ...page,
          inject: (path: string[], source: string) =>
            locked(async () => {
              await enter(path, handle)
              await driver.executeScript(source)
            }),
          waitFor: async (path: string[], css: string) => {
            await shown(path, css)
          },
          async click(path: string[], css: string) {
            await shown(path, css)
            await locked(async () => {
              await enter(path, handle)
              await driver.findElement(By.css(css)).click()
            })
          },
          async type(path: string[], css: string, text: string) {
            await shown(path, css)
            await locked(async () => {
              await enter(path, handle)
              // Element Send Keys finds fields in the modal's cross-site frame 'not focusable' in
              // WebKitGTK: a click focuses it, then the keys go to the focused element.
              await driver.findElement(By.css(css)).click()
              await driver.actions().sendKeys(text).perform()
            })
          },
          async text(path: string[], css: string) {
            await shown(path, css)
            return locked(async () => {
              await enter(path, handle)
              return (await driver.executeScript(
                'return document.querySelector(arguments[0])?.textContent ?? ""',
                css,
              )) as string
            })
          },
        }
      }
      const popup = async (): Promise<EnginePage> => {
        const handle = await until('a window the page opened', async () =>
          (await locked(() => driver.getAllWindowHandles())).find((h: string) => h !== main),
        )
        return {
          engine: 'webkit',
          ...steps(handle),
          goto: () => Promise.reject(new Error('a window the page opened is not navigated')),
          popup: () => Promise.reject(new Error('one window deep')),
          // The window closes itself; a step after that fails.
          close: async () => {},
        }
      }
      return {
        engine: 'webkit',
        goto: (url) =>
          locked(async () => {
            await enter([])
            await driver.get(url)
          }),
        ...steps(main),
        popup,
        async close() {
          sessions.delete(driver)
          const ended = await withTimeout(driver.quit(), 20_000, 'closing a MiniBrowser session')
            .then(() => true)
            .catch(() => false)
          if (ended) {
            idle.push(server)
            return
          }
          drivers.delete(server.child)
          await stopChild(server.child)
        },
      }
    },
    async close() {
      for (const s of sessions) await withTimeout(s.quit(), 20_000, 'quitting').catch(() => {})
      for (const child of drivers) await stopChild(child)
      await xvfb.stop()
    },
  }
}

export const launchEngine = (engine: Engine, proxyPort: number) =>
  engine === 'firefox' ? launchFirefox(proxyPort) : launchWebKit(proxyPort)
