// A trip booking written in code: book a flight, then a hotel, then charge the card. Booking steps name
// their compensation, so a charge that fails for good cancels the hotel, then the flight (last booked,
// first cancelled). Used by trip.test.ts, which runs it on the in-memory store in milliseconds.
import { defineStep, defineWorkflow, inputOf, outputOf, text } from '@weft/core';
import { type Handler, handle, TerminalError } from '@weft/embedded';

/** What the trip takes and gives back (type aliases, not interfaces, so that they are JSON types). */
export type TripInput = { readonly traveller: string; readonly amount: number };
export type TripOutput = { readonly flight: string; readonly hotel: string; readonly payment: string };

export const bookFlight = defineStep<{ traveller: string }, { ref: string }>('trips.book-flight');
export const cancelFlight = defineStep<{ ref: string }, null>('trips.cancel-flight');
export const bookHotel = defineStep<{ traveller: string; nights: number }, { ref: string }>(
  'trips.book-hotel',
);
export const cancelHotel = defineStep<{ ref: string }, null>('trips.cancel-hotel');
export const charge = defineStep<{ amount: number }, { payment: string }>('payments.charge', {
  retry: { maxAttempts: 3, backoff: 'exponential', delay: '30s', maxDelay: '5m' },
  timeout: '1m',
});

export const trip = defineWorkflow<TripInput, TripOutput>('trip')
  .describe('Book a flight and a hotel, then charge; undo the bookings if the charge fails for good.')
  .task('flight', bookFlight, {
    input: { traveller: inputOf('traveller') },
    compensate: { step: cancelFlight, input: { ref: outputOf('flight', 'ref') } },
  })
  .task('hotel', bookHotel, {
    after: ['flight'],
    input: { traveller: inputOf('traveller'), nights: 2 },
    // Without an input mapping, the compensation gets the hotel's own output ({ ref }).
    compensate: { step: cancelHotel },
  })
  .task('payment', charge, { after: ['hotel'], input: { amount: inputOf('amount') } })
  .transform('receipt', { after: ['payment'], value: { note: text('booked') } })
  .output({
    flight: outputOf('flight', 'ref'),
    hotel: outputOf('hotel', 'ref'),
    payment: outputOf('payment', 'payment'),
  })
  .build();

/** What the handlers did, for the test to look at. */
export interface Ledger {
  readonly booked: string[];
  readonly cancelled: string[];
  charges: number;
}

/**
 * Handlers for the trip: plain async functions, typed by their steps. `bank` decides each charge: ok,
 * a passing failure (retried) or a declined card (not retried).
 */
export function tripHandlers(
  ledger: Ledger,
  bank: (attempt: number) => 'ok' | 'down' | 'declined',
): Handler[] {
  return [
    handle(bookFlight, async ({ traveller }) => {
      ledger.booked.push(`flight:${traveller}`);
      return { ref: `FL-${traveller}` };
    }),
    handle(bookHotel, async ({ traveller }) => {
      ledger.booked.push(`hotel:${traveller}`);
      return { ref: `HO-${traveller}` };
    }),
    handle(cancelFlight, async ({ ref }) => {
      ledger.cancelled.push(ref);
      return null;
    }),
    handle(cancelHotel, async ({ ref }) => {
      ledger.cancelled.push(ref);
      return null;
    }),
    handle(charge, async ({ amount }, ctx) => {
      ledger.charges++;
      const verdict = bank(ctx.attempt);
      if (verdict === 'down') throw new Error('the bank did not answer');
      if (verdict === 'declined') throw new TerminalError('card declined');
      return { payment: `PAY-${amount}` };
    }),
  ];
}
