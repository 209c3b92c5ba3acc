/**
 * The server-rendered page's one inline script (server.ts puts it after the root element; the
 * CSP allows it by its hash). Until the modal's JavaScript hydrates the landing it:
 * - keeps what the visitor does: the text typed in each field (with the field, so the page can
 *   tell whether the field is still the one typed in), Enter in a field and a click on a button
 *   are held (the page cannot act on them yet) and handed to the page, which puts the text back
 *   where the landing was rendered afresh and carries each action out once the landing is
 *   hydrated and the host's sign-in is on screen (hydrate.tsx, replay.ts); the
 *   form's own submission, which would navigate the frame, is stopped (the CSP's
 *   `form-action 'none'` refuses it anyway);
 * - tells the host page that a landing is painted, how tall it is and the modal's name as a
 *   dialog (nothing else of the page), so its `login()` may show the frame, named, before the
 *   modal's JavaScript answers (host-sdk/src/create-latch.ts). Not where
 *   this browser may hold a session of the app (the modal's session hint, token-store.ts): a
 *   signed-in visitor's `login()` answers without a landing.
 *
 * - starts the modal's JavaScript (the entry the server left as a `<link rel="modulepreload">`,
 *   fetched meanwhile) after the page's first frame, so the landing is on screen before the
 *   JavaScript's compile, run and hydration hold the main thread; at once where no landing will
 *   show (a session hint), after `ENTRY_FALLBACK_MS` where no frame comes.
 *
 * Plain ES5-level script as text: it runs before any bundle, and its hash is of these bytes.
 */

/**
 * The attribute of the `<link rel="modulepreload">` that stands for the page's entry script in a
 * server-rendered page (ssr.ts): the script starts the entry from its `href` after the first
 * frame, so the landing paints before the JavaScript runs. From the link, not from this text:
 * the entry's name changes with each build, this script's hash must not.
 */
export const ENTRY_ATTR = 'data-latch-entry'

/**
 * How long the script waits for a first frame before it starts the entry anyway: a frame the host
 * still hides (display none, a preloaded frame) gets none.
 */
export const ENTRY_FALLBACK_MS = 100

/** The attribute the server marks its landing's root with (ssr.ts; hydrate.tsx reads it). */
export const SERVER_RENDERED_ATTR = 'data-latch-ssr'

/** Where the script leaves what it held, for main.tsx. */
export const BEFORE_HYDRATION_KEY = 'latchBeforeHydration'

/** The message the host SDK reads: the landing's height in CSS pixels. */
export const LANDING_PAINTED_MESSAGE = 'latchLanding'

/** Beside it, the modal's name as a dialog (its aria-label, in the visitor's language). */
export const LANDING_LABEL_MESSAGE = 'title'

export type HeldAction =
  | { kind: 'submit' | 'click'; testId: string }
  | { kind: 'type'; testId: string; value: string; field: HTMLInputElement }

/** What the script leaves on the window. */
export interface BeforeHydration {
  /**
   * The held actions, in order: text typed in the field of this test id (one entry per field,
   * its latest text, at its first keystroke), a submit by Enter in that field, a click.
   */
  actions: HeldAction[]
  /** Stops holding: the hydrated page handles what follows itself. */
  stop(): void
}

export const BEFORE_HYDRATION_SCRIPT = `(function(){var d=document,w=window,r=d.getElementById('root'),a=[],ent=d.querySelector('link[${ENTRY_ATTR}]'),g=0;
function run(){var s;if(g++||!ent)return;s=d.createElement('script');s.type='module';if(ent.hasAttribute('crossorigin'))s.setAttribute('crossorigin',ent.getAttribute('crossorigin'));s.src=ent.getAttribute('href');d.head.appendChild(s)}
if(ent){if(w.requestAnimationFrame)w.requestAnimationFrame(function(){setTimeout(run,0)});setTimeout(run,${ENTRY_FALLBACK_MS})}
if(!r)return;
function id(e){return e&&e.getAttribute('data-testid')}
function hold(k,t){var l=a[a.length-1];if(t&&!(l&&l.kind===k&&l.testId===t))a.push({kind:k,testId:t})}
function key(e){var t=e.target;if(e.key==='Enter'&&t.tagName==='INPUT'&&t.form){e.preventDefault();hold('submit',id(t))}}
function click(e){var b=e.target.closest&&e.target.closest('button');if(b&&!b.disabled){e.preventDefault();hold('click',id(b))}}
function submit(e){e.preventDefault()}
function input(e){var t=e.target,i=id(t),j;if(!i||t.tagName!=='INPUT')return;for(j=0;j<a.length;j++)if(a[j].kind==='type'&&a[j].testId===i){a[j].value=t.value;return}a.push({kind:'type',testId:i,value:t.value,field:t})}
r.addEventListener('keydown',key,true);r.addEventListener('click',click,true);r.addEventListener('submit',submit,true);r.addEventListener('input',input,true);
w.${BEFORE_HYDRATION_KEY}={actions:a,stop:function(){r.removeEventListener('keydown',key,true);r.removeEventListener('click',click,true);r.removeEventListener('submit',submit,true);r.removeEventListener('input',input,true)}};
try{if(/(^|;\\s*)latch-session-[^=]*=1/.test(d.cookie))return run();for(var i=0;i<localStorage.length;i++)if(/^latch-session-/.test(localStorage.key(i)))return run()}catch(x){}
var m=r.firstElementChild;if(m&&w.parent!==w)w.parent.postMessage({${LANDING_PAINTED_MESSAGE}:Math.ceil(m.getBoundingClientRect().height),${LANDING_LABEL_MESSAGE}:m.getAttribute('aria-label')},'*')})()`
