import type { Agent } from 'undici';
import { type OutboundPolicy, outboundPolicy } from './address-policy.js';
import { outboundAgent } from './outbound-fetch.js';

/** An outbound policy with the HTTP agent that enforces it, shared by every outbound call of an engine. */
export interface Outbound {
  readonly policy: OutboundPolicy;
  readonly agent: Agent;
}

/** The policy and agent for an allow-list (see parseOutboundAllow); refuses internal addresses otherwise. */
export function createOutbound(allow?: string | readonly string[]): Outbound {
  const policy = outboundPolicy(allow);
  return { policy, agent: outboundAgent(policy) };
}
