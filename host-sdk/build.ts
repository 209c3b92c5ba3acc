/**
 * Builds the host SDK: dist/sdk.js (the one-line script, IIFE) and dist/latch.js (the ESM entry),
 * both minified, and dist/wallet-bridge.js (ESM), the wallet bridge the SDK imports only when the
 * modal first asks for wallets, which the modal origin serves; and dist/npm/, the npm package's
 * entry (buildHostSdkPackage). Run with `tsx host-sdk/build.ts`.
 *
 * Both must stay under 6 KB gzip (size.test.ts). Four things keep them there: shared modules are
 * treated as side-effect free (nothing of shared/src runs at import); the error catalogue is cut
 * to the codes the SDK can raise (a first build with an empty catalogue shows which codes the
 * bundle names; the real build keeps exactly those entries, taken from the catalogue itself,
 * and without any `rpc_` entry the loop mapping provider codes to them goes too, with
 * toLatchError's branch that reads that map);
 * parts of penpal the SDK never uses are cut; and property names that never leave the bundle
 * are shortened. Any code the SDK names as a string keeps its entry, even one it only compares
 * against, and an `rpc_` one keeps the map: tell a provider error apart by its `rpcCode`.
 */
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ERRORS } from '@latch/shared'
import { build, type InlineConfig, type Plugin } from 'vite'
import { buildLibrary } from '../scripts/build-library.ts'

const ROOT = fileURLToPath(new URL('.', import.meta.url))
const CATALOGUE = /export const ERRORS = \{[\s\S]*?\n\} as const/
const SHARED_MODULE = /[\\/]shared[\\/]src[\\/]/
/** Where the error class and its helpers live: the shared/src/errors/ folder. */
const ERRORS_MODULE = /[\\/]shared[\\/]src[\\/]errors[\\/]/

/**
 * The loop in shared/src/errors/serialize.ts that maps provider codes to the catalogue's `rpc_`
 * entries: a bundle that keeps none of them gets an empty map without it.
 */
const RPC_LOOP =
  /\nfor \(const \[code, spec\] of Object\.entries\(ERRORS\)[^\n]*\n[^\n]*rpcCode\n[^\n]*RPC_CODES\.set[^\n]*\n\}\n/

/** rpcErrorCode's lookup in that map. */
const RPC_LOOKUP = /return RPC_CODES\.get\(rpcCode\)/

/** toLatchError's branch that maps an object's provider code to its entry through that map. */
const RPC_BRANCH =
  /\n {2}if \(typeof e === 'object' && e !== null\) \{\n {4}const rpc = [\s\S]*?\n {2}\}\n(?= {2}return LatchError\.of\('internal_error')/

/** Replaces the catalogue, wherever in shared/src it is, with the entries for `codes`. */
function errorCatalogue(codes: ReadonlySet<string>): Plugin {
  let found = false
  const noRpc = ![...codes].some((c) => c.startsWith('rpc_'))
  return {
    name: 'latch-error-catalogue',
    enforce: 'pre',
    transform(code, id) {
      if (noRpc && ERRORS_MODULE.test(id) && RPC_LOOP.test(code)) {
        // With the map empty, no provider code maps to an entry: the lookup and its branch go.
        if (!RPC_BRANCH.test(code)) this.error('toLatchError changed: its provider-code branch')
        return code
          .replace(RPC_LOOP, '\n')
          .replace(RPC_LOOKUP, 'return undefined')
          .replace(RPC_BRANCH, '\n')
      }
      if (!SHARED_MODULE.test(id) || !CATALOGUE.test(code)) return null
      found = true
      const kept = Object.fromEntries(Object.entries(ERRORS).filter(([code]) => codes.has(code)))
      return code.replace(CATALOGUE, () => `export const ERRORS = ${JSON.stringify(kept)} as const`)
    },
    buildEnd(error) {
      // A moved or reshaped catalogue would otherwise ship whole and silently break the budget.
      if (!error && !found) this.error('the ERRORS catalogue was not found in shared/src')
    },
  }
}

/**
 * Parts of penpal are dead code here, and cutting them keeps the SDK in its budget:
 * - its debug messages: the SDK never passes a `log` function, so each `log?.(...)` becomes a call
 *   on undefined, which the minifier drops with its strings;
 * - its translation for children running penpal 6 or older: the modal runs penpal 7;
 * - `Reply` (transferables in an answer): the host methods answer plain values;
 * - `CallOptions` (a per-call timeout and transferables): the SDK times its calls itself
 *   (calls.ts) and passes no options, so penpal's own call timer goes too;
 * - its argument checks: create-latch.ts gives each connection a new WindowMessenger over a
 *   content window it has checked itself, so a missing or reused messenger or window never
 *   reaches penpal;
 * - its wildcard and RegExp origins: the SDK allows exactly one origin, the modal's, so an
 *   origin is allowed only when it is that string (never '*', which only narrows);
 * - the window messenger's separate branch for sending SYN: with the translation for old
 *   children gone, ACK1's branch sends it the same way;
 * - nested method objects: exposeMethods hands penpal a flat object of functions;
 * - the remote proxy's native `apply`, `call` and `bind`: the SDK only ever calls a remote
 *   method directly (`r.init(...)`), never through them;
 * - the error reply penpal retries with when an answer cannot be cloned (DataCloneError): the
 *   host methods answer undefined, strings and the wallet bridge's checked plain data;
 * - PenpalError's field declaration (its constructor sets `code`);
 * - the long texts of sending before the handshake set the port or the origin: the SDK sends
 *   calls only after it, so they never show (a short text stays);
 * - serialized Error instances in replies: both sides answer failures as plain LatchError
 *   objects (exposeMethods); penpal's own METHOD_NOT_FOUND crosses as its text;
 * - the catch around each handshake message's send (plain data that does not throw).
 * The edits are exact; if penpal's text changes, the build fails here instead of growing.
 */
const PENPAL_EDITS: [RegExp, string][] = [
  [/\b(?:this\.#)?log\?\.\(/g, '(void 0)?.('],
  [/this\.#isChildUsingDeprecatedProtocol = true;/g, ''],
  [/this\.#isChildUsingDeprecatedProtocol\b/g, 'false'],
  [/if \(isDeprecatedMessage\(data\)\)/g, 'if (false)'],
  [/remoteParticipantId !== DEPRECATED_PENPAL_PARTICIPANT_ID/g, 'true'],
  [/remoteParticipantId === DEPRECATED_PENPAL_PARTICIPANT_ID/g, 'false'],
  [/value instanceof Reply_default/g, 'false'],
  [
    /const \{ timeout, transferables \} = lastArgIsOptions \? lastArg : \{\};/g,
    'const timeout = void 0, transferables = void 0;',
  ],
  [
    /if \(!(?:messenger|remoteWindow)\) \{\s*throw new PenpalError_default\("INVALID_ARGUMENT", "\w+ must be defined"\);\s*\}/g,
    '',
  ],
  [/if \(usedMessengers\.has\(messenger\)\) \{[^}]*\}\s*usedMessengers\.add\(messenger\);/g, ''],
  [
    /allowedOrigin instanceof RegExp \? allowedOrigin\.test\(origin\) : allowedOrigin === origin \|\| allowedOrigin === "\*"/g,
    'allowedOrigin === origin',
  ],
  [
    /this\.#concreteRemoteOrigin === "null" && this\.#allowedOrigins\.includes\("\*"\) \? "\*" : this\.#concreteRemoteOrigin/g,
    'this.#concreteRemoteOrigin',
  ],
  [/allowedOrigins\?\.length \? allowedOrigins : \[window\.origin\]/g, 'allowedOrigins'],
  [
    /if \(isSynMessage\(message\)\) \{\s*const originForSending = this\.#getOriginForSendingMessage\(message\);\s*this\.#remoteWindow\.postMessage\(message, \{\s*targetOrigin: originForSending,\s*transfer: transferables\s*\}\);\s*return;\s*\}\s*if \(isAck1Message\(message\) \|\|/g,
    'if (isSynMessage(message) || isAck1Message(message) ||',
  ],
  // Nested method objects.
  [
    /\} else if \(isObject\(value\)\) \{\s*methodPaths\.push\(\s*\.\.\.extractMethodPathsFromMethods\(value, \[\.\.\.currentPath, key\]\)\s*\);\s*\}/g,
    '}',
  ],
  // What is left of CallOptions: the last argument, and the per-call timer penpal never starts.
  [/const lastArg = args\[args\.length - 1\];/g, ''],
  [/lastArg instanceof CallOptions_default/g, 'false'],
  [
    /const timeoutId = timeout !== void 0 \? window\.setTimeout\([\s\S]*?\}, timeout\) : void 0;/g,
    '',
  ],
  [
    /replyHandlers\.set\(callId, \{ methodPath, resolve, reject, timeoutId \}\);/g,
    'replyHandlers.set(callId, { methodPath, resolve, reject });',
  ],
  [
    /for \(const \{ methodPath, reject, timeoutId \} of replyHandlers\.values\(\)\) \{\s*clearTimeout\(timeoutId\);/g,
    'for (const { methodPath, reject } of replyHandlers.values()) {',
  ],
  // The DataCloneError retry (its debug line is already gone above).
  [
    /try \{\s*(?:\(void 0\)\?\.\([^;]*;\s*)?messenger\.sendMessage\(replyMessage, transferables\);\s*\} catch \(error\) \{\s*if \(error\.name === "DataCloneError"\) \{[\s\S]*?\}\s*throw error;\s*\}/g,
    'messenger.sendMessage(replyMessage, transferables);',
  ],
  [
    /"Cannot send message because the (?:MessagePort is not connected|remote origin is not established)"/g,
    '"Not connected"',
  ],
  // PenpalError's `code;`, the only such line.
  [/^ {2}code;$/m, ''],
  // The remote proxy's native apply, call and bind.
  [
    /if \(path\.length && methodsToTreatAsNative\.has\(prop\)\) \{\s*return Reflect\.get\(target, prop\);\s*\}/g,
    '',
  ], // Errors as penpal's own objects: exposeMethods answers every failure of a host method, and of
  // a modal method, as a plain LatchError object, so the only Error instance left is penpal's
  // METHOD_NOT_FOUND (the other side newer than this one), whose text alone crosses; and a
  // reply never carries a serialized Error to rebuild (toLatchError makes either an
  // internal_error, as it did the rebuilt PenpalError).
  [
    /\.\.\.error instanceof Error \? \{ value: serializeError\(error\), isSerializedErrorInstance: true \} : \{ value: error \}/g,
    'value: error instanceof Error ? error.message : error',
  ],
  [/isSerializedErrorInstance \? deserializeError\(value\) : value/g, 'value'],
  [
    /const \{ callId, value, isError, isSerializedErrorInstance \} = message;/g,
    'const { callId, value, isError } = message;',
  ],
  // A short text for a call the destroyed connection ends (its code says it; the SDK's
  // destroy() rejects its own calls with modal_unreachable first).
  [
    /`Method call \$\{formatMethodPath\(\s*methodPath\s*\)\}\(\) failed due to destroyed connection`/g,
    '"Connection destroyed"',
  ],
  // The handshake's sends without their catch: a SYN, ACK1 or ACK2 (plain data, to a window
  // whose origin the SYN set) does not throw; if one ever did, the connection times out.
  [
    /try \{\s*messenger\.sendMessage\((syn|ack1|ack2)Message\);\s*\} catch \(error\) \{\s*reject\(new PenpalError_default\("TRANSMISSION_FAILED", error\.message\)\);\s*(?:return;\s*)?\}/g,
    'messenger.sendMessage($1Message);',
  ],
]
const penpalTrimmed: Plugin = {
  name: 'latch-penpal-trimmed',
  transform(code, id) {
    if (!/[\\/]penpal[\\/]dist[\\/]penpal\.mjs$/.test(id)) return null
    let out = code
    for (const [pattern, replacement] of PENPAL_EDITS) {
      if (out.search(pattern) < 0) this.error(`penpal changed: ${pattern} not found`)
      out = out.replace(pattern, replacement)
    }
    return out
  },
}

/**
 * Properties of the SDK's own objects (the frame handle, the call and event registries) that
 * never leave the bundle, shortened by the minifier. Never list a name that crosses postMessage
 * (penpal's messages, HostMethods, ModalMethods), belongs to the DOM or to the public API
 * (LatchClient): the other side would no longer find it. link.test.ts runs the built bundle.
 */
const INTERNAL_PROPERTIES = /^(?:iframe|dialog|isOpen|invoke|flow|flowPending|settleAll|dispatch)$/

/** What each build writes: the SDK twice (sdk.js, latch.js) and the wallet bridge. */
const TARGETS = {
  iife: { entry: 'src/script.ts', fileName: 'sdk.js', format: 'iife' },
  es: { entry: 'src/index.ts', fileName: 'latch.js', format: 'es' },
  bridge: { entry: 'src/bridge/index.ts', fileName: 'wallet-bridge.js', format: 'es' },
  // The EIP-1193 provider, imported on the first getEthereumProvider() (src/provider/).
  provider: { entry: 'src/provider/index.ts', fileName: 'provider.js', format: 'es' },
} as const
type Target = keyof typeof TARGETS

function config(
  target: Target,
  codes: ReadonlySet<string>,
  outDir: string,
  write: boolean,
): InlineConfig {
  const { entry, fileName, format } = TARGETS[target]
  return {
    configFile: false,
    root: ROOT,
    logLevel: 'warn',
    // The provider raises no LatchError (its errors are EIP-1193's): no catalogue to cut.
    plugins: target === 'provider' ? [] : [errorCatalogue(codes), penpalTrimmed],
    build: {
      outDir,
      emptyOutDir: false,
      write,
      copyPublicDir: false,
      target: 'es2022',
      minify: true,
      sourcemap: false,
      // Library mode keeps the ESM entry's exports; the IIFE's name is never used (no exports).
      lib: { entry, formats: [format], fileName: () => fileName, name: 'LatchSdk' },
      rolldownOptions: {
        treeshake: {
          moduleSideEffects: (id) => (SHARED_MODULE.test(id) ? false : undefined),
        },
        // An object here replaces `true`, so compress, mangle and codegen are named again.
        output: {
          minify: {
            compress: true,
            mangle: true,
            codegen: true,
            mangleProps: { include: INTERNAL_PROPERTIES },
          },
        },
      },
    },
  }
}

/** The rendered code of each module in the bundle, by module id. */
async function bundleModules(target: Target): Promise<Map<string, string>> {
  const result = await build(config(target, new Set(), 'dist', false))
  const modules = new Map<string, string>()
  for (const output of Array.isArray(result) ? result : [result]) {
    if (!('output' in output)) continue
    for (const chunk of output.output) {
      if (chunk.type !== 'chunk') continue
      for (const [id, module] of Object.entries(chunk.modules)) modules.set(id, module.code ?? '')
    }
  }
  return modules
}

/**
 * Error codes the bundle can raise, found by building it with an empty catalogue: every code
 * the SDK's modules name, and those the error modules themselves raise with `LatchError.of`
 * (their other mentions, such as the list of error types, raise nothing).
 */
export async function usedErrorCodes(
  targets: readonly Target[] = ['iife', 'es'],
): Promise<Set<string>> {
  const used = new Set<string>()
  for (const target of targets) {
    for (const [id, code] of await bundleModules(target)) {
      const pattern = ERRORS_MODULE.test(id)
        ? /LatchError\.of\(\s*["'`]([a-z0-9_]+)["'`]/g
        : /["'`]([a-z0-9_]+)["'`]/g
      for (const [, literal] of code.matchAll(pattern)) {
        if (literal && Object.hasOwn(ERRORS, literal)) used.add(literal)
      }
    }
  }
  return used
}

/**
 * The bridge's catalogue: the codes it names, and every provider-code entry, since it maps any
 * EIP-1193 or JSON-RPC code a wallet answers to its entry (rpcErrorCode).
 */
async function bridgeErrorCodes(): Promise<Set<string>> {
  const codes = await usedErrorCodes(['bridge'])
  for (const [code, spec] of Object.entries(ERRORS)) {
    if ('rpcCode' in spec && code.startsWith('rpc_')) codes.add(code)
  }
  return codes
}

/** Builds dist/sdk.js, dist/latch.js, dist/wallet-bridge.js and dist/provider.js (or into `outDir`). */
export async function buildHostSdk(options: { outDir?: string } = {}): Promise<void> {
  const outDir = options.outDir ?? 'dist'
  const [codes, bridgeCodes] = await Promise.all([usedErrorCodes(), bridgeErrorCodes()])
  for (const target of ['iife', 'es'] as const) await build(config(target, codes, outDir, true))
  await build(config('bridge', bridgeCodes, outDir, true))
  await build(config('provider', new Set(), outDir, true))
}

/**
 * Builds the npm package's entry into dist/npm/ (scripts/build-library.ts): `createLatch` as an
 * ES module for an app's bundler, unminified, with shared and penpal bundled in and its
 * declarations. The wallet bridge and the provider stay on the modal origin, imported at run
 * time from the modal URL, so the package carries neither.
 */
export async function buildHostSdkPackage(options: { outDir?: string } = {}): Promise<string> {
  return buildLibrary({
    name: 'host-sdk',
    external: [],
    outDir: options.outDir ?? join(ROOT, 'dist/npm'),
  })
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await buildHostSdk()
  await buildHostSdkPackage()
}
