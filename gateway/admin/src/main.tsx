/** Entry point of the admin UI (built by Vite into dist/admin, served by the gateway at /admin). */
import { render } from 'preact';
import { App } from './app';
import './styles.css';

render(<App />, document.getElementById('app') as HTMLElement);
