import { createRoot } from 'react-dom/client'
import { App } from './App.tsx'
import { start } from './startup.ts'
import './styles.css'

const { configured } = start()
const root = document.getElementById('root')
// The first render waits for the app configuration. On a phone the render takes longer than the
// configuration takes to arrive, and the host handshake, which waits for the configuration,
// waited for the render too; now the render overlaps the handshake. Until then, index.html
// shows the loading view's markup without JavaScript.
if (root) void configured.then(() => createRoot(root).render(<App />))
