import { createRoot } from 'react-dom/client'
import { App } from './App.tsx'
import { start } from './startup.ts'
import './styles.css'

const { configured } = start()
const root = document.getElementById('root')
// The first render waits for the app configuration: on a phone it takes longer than the
// configuration takes to arrive, and the host handshake that waits on it would wait on it too.
// Rendered meanwhile, the host connects while it runs and the first screen is the landing.
if (root) void configured.then(() => createRoot(root).render(<App />))
