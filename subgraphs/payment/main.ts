/** Starts the payment service alone on PAYMENT_PORT (default 8087). */
import { runAlone } from '../../platform/run';
import { createPaymentService } from './index';

void runAlone('payment', createPaymentService);
