/**
 * The server-rendered page's one inline script (server.ts puts it after the root element; the
 * CSP allows it by its hash). Until the modal's JavaScript hydrates the landing it:
 * - keeps what the visitor does: Enter in a field and a click on a button are held (the page
 *   cannot act on them yet) and handed to the page, which carries each out once the landing is
 *   hydrated and the host's sign-in is on screen (main.tsx, `replayBeforeHydration`); the
 *   form's own submission, which would navigate the frame, is stopped (the CSP's
 *   `form-action 'none'` refuses it anyway);
 * - tells the host page that a landing is painted and how tall it is (nothing else of the
 *   page), so its `login()` may show
 *   the frame before the modal's JavaScript answers (host-sdk/src/create-latch.ts). Not where
 *   this browser may hold a session of the app (the modal's session hint, token-store.ts): a
 *   signed-in visitor's `login()` answers without a landing.
 *
 * Plain ES5-level script as text: it runs before any bundle, and its hash is of these bytes.
 */

/** The attribute the server marks its landing's root with (ssr.ts; hydrate.tsx reads it). */
export const SERVER_RENDERED_ATTR = 'data-latch-ssr'

/** Where the script leaves what it held, for main.tsx. */
export const BEFORE_HYDRATION_KEY = 'latchBeforeHydration'

/** The message the host SDK reads: the landing's height in CSS pixels. */
export const LANDING_PAINTED_MESSAGE = 'latchLanding'

/** What the script leaves on the window. */
export interface BeforeHydration {
  /** The held actions, in order: a submit by Enter in the field of this test id, a click. */
  actions: { kind: 'submit' | 'click'; testId: string }[]
  /** Stops holding: the hydrated page handles what follows itself. */
  stop(): void
}

export const BEFORE_HYDRATION_SCRIPT = `(function(){var d=document,w=window,r=d.getElementById('root'),a=[];if(!r)return;
function id(e){return e&&e.getAttribute('data-testid')}
function hold(k,t){var l=a[a.length-1];if(t&&!(l&&l.kind===k&&l.testId===t))a.push({kind:k,testId:t})}
function key(e){var t=e.target;if(e.key==='Enter'&&t.tagName==='INPUT'&&t.form){e.preventDefault();hold('submit',id(t))}}
function click(e){var b=e.target.closest&&e.target.closest('button');if(b&&!b.disabled){e.preventDefault();hold('click',id(b))}}
function submit(e){e.preventDefault()}
r.addEventListener('keydown',key,true);r.addEventListener('click',click,true);r.addEventListener('submit',submit,true);
w.${BEFORE_HYDRATION_KEY}={actions:a,stop:function(){r.removeEventListener('keydown',key,true);r.removeEventListener('click',click,true);r.removeEventListener('submit',submit,true)}};
try{if(/(^|;\\s*)latch-session-[^=]*=1/.test(d.cookie))return;for(var i=0;i<localStorage.length;i++)if(/^latch-session-/.test(localStorage.key(i)))return}catch(x){}
var m=r.firstElementChild;if(m&&w.parent!==w)w.parent.postMessage({${LANDING_PAINTED_MESSAGE}:Math.ceil(m.getBoundingClientRect().height)},'*')})()`
