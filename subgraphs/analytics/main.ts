/** Starts the analytics service alone on ANALYTICS_PORT (default 8088). */
import { runAlone } from '../../platform/run';
import { createAnalyticsService } from './index';

void runAlone('analytics', createAnalyticsService);
