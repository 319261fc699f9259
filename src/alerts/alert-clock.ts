import { Injectable } from '@nestjs/common';

/**
 * The time alerts are evaluated at: the system clock. One injectable place, so a test can move
 * time (replace `now` on the app's instance) instead of waiting for windows to pass.
 */
@Injectable()
export class AlertClock {
  now(): Date {
    return new Date();
  }
}
