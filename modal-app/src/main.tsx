import { createRoot } from 'react-dom/client'
import { App } from './App.tsx'
import { start } from './startup.ts'
import './styles.css'

const root = document.getElementById('root')
// The first render waits for the host's init: the landing is then rendered once, with the app
// and the host configuration, instead of a loading view first and the landing over it (on a
// phone's first open each render of the tree cost ~20 ms of the main thread the host page
// shares). Until then, index.html shows the loading view's markup without JavaScript; the host
// shows the frame only once a flow opens it, after init.
start(root ? { render: () => createRoot(root).render(<App />) } : {})
