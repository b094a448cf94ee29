/**
 * An admin key for test servers: start one with `auth: { bootstrapAdminKey: TEST_ADMIN_KEY }` and send
 * `Authorization: Bearer ${TEST_ADMIN_KEY}`. Public, so never for a server anyone else can reach.
 */
export const TEST_ADMIN_KEY = 'weft_000000000001_testAdminKeyForWeftTestsOnly000000000000000';

/** The headers that authenticate a test's requests with the test admin key. */
export const TEST_AUTH_HEADERS: Readonly<Record<string, string>> = {
  authorization: `Bearer ${TEST_ADMIN_KEY}`,
};

/** The name a server gives the test admin key (the actor history records for its requests). */
export const TEST_ADMIN_NAME = 'bootstrap-admin-000000000001';
