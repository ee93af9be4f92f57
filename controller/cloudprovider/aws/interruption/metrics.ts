// The interruption counters the SQS source itself touches, with Karpenter's names (docs/karpenter/aws-provider.md §6).
// The source only counts what never reaches the controller: a message it cannot parse is counted under
// message_type="unparseable" and deleted here. Parsed messages are counted (by type, queue time, deletion)
// by the controller's interruption controller, on the operator's registry; the controller passes its own
// counters in (createCloudProvider), so each series exists once. interruptionMetrics() makes standalone
// ones for tests and tools.
import { Counter, type Registry } from 'prom-client';

export interface InterruptionMetrics {
  readonly received: Counter<'message_type'>;
  readonly deleted: Counter;
}

export function interruptionMetrics(registry: Registry): InterruptionMetrics {
  return {
    received: new Counter({
      name: 'karpenter_interruption_received_messages_total',
      help: 'Interruption messages received from the queue, by message type.',
      labelNames: ['message_type'],
      registers: [registry],
    }),
    deleted: new Counter({
      name: 'karpenter_interruption_deleted_messages_total',
      help: 'Interruption messages deleted from the queue.',
      registers: [registry],
    }),
  };
}
