/** Starts the user service alone on USER_PORT (default 8082). */
import { runAlone } from '../../platform/run';
import { createUserService } from './index';

void runAlone('user', createUserService);
