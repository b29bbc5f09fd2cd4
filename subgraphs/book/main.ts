/** Starts the book service alone on BOOK_PORT (default 8083). */
import { runAlone } from '../../platform/run';
import { createBookService } from './index';

void runAlone('book', createBookService);
