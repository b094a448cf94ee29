/**
 * A saga for the compensation tests: book a flight and a hotel (each undone by `unbook`, the flight's
 * with its booking reference), then pay, which fails for good on its first failure.
 */
export const BOOKING = `
name: booking
nodes:
  - { id: flight, task_type: book, compensate: { task_type: unbook, input: { ref: nodes.flight.output.ref } } }
  - { id: hotel, task_type: book, compensate: { task_type: unbook } }
  - { id: pay, task_type: pay, retry: { max_attempts: 1 } }
edges:
  - { from: flight, to: hotel }
  - { from: hotel, to: pay }
`;
