import { createRoot } from 'react-dom/client'
import { App } from './App.tsx'
import { start } from './startup.ts'
import './styles.css'

const root = document.getElementById('root')
if (root) createRoot(root).render(<App />)
start()
