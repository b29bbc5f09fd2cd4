/** Starts the order service alone on ORDER_PORT (default 8084). */
import { runAlone } from '../../platform/run';
import { createOrderService } from './index';

void runAlone('order', createOrderService);
