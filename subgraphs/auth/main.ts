/** Starts the auth service alone on AUTH_PORT (default 8081). */
import { runAlone } from '../../platform/run';
import { createAuthService } from './index';

void runAlone('auth', createAuthService);
