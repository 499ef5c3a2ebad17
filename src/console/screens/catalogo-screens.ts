// The clientes and productos screens as one plugin, so the door mounts the catalog with a single line (issue 27).
import { Elysia } from 'elysia'
import type { Deps } from '../../services/deps'
import { clienteScreens } from './clientes'
import { productoScreens } from './productos'

export const catalogoScreens = (deps: Deps) => new Elysia({ normalize: false }).use(clienteScreens(deps)).use(productoScreens(deps))
