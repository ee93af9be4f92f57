// AWS error codes as sets, and the reasons launch failures map to (docs/karpenter/aws-provider.md §4.7; Karpenter
// pkg/errors/errors.go). SDK v3 errors carry the code in `name`; JSON protocols in AWS-query compatibility
// mode (SQS) also carry the legacy code in `Code`, so both are checked.

/** Codes meaning the thing asked about does not exist. */
const NOT_FOUND_CODES: ReadonlySet<string> = new Set([
  'InvalidInstanceID.NotFound',
  'InvalidLaunchTemplateId.NotFound',
  'InvalidLaunchTemplateName.NotFoundException',
  'NoSuchEntity',
  'NoSuchEntityException',
  'ParameterNotFound',
  'QueueDoesNotExist',
  'AWS.SimpleQueueService.NonExistentQueue',
]);

const LAUNCH_TEMPLATE_NOT_FOUND_CODES: ReadonlySet<string> = new Set([
  'InvalidLaunchTemplateId.NotFound',
  'InvalidLaunchTemplateName.NotFoundException',
]);

/** CreateFleet error codes that make an offering unavailable for the ICE TTL. */
const UNFULFILLABLE_CAPACITY_CODES: ReadonlySet<string> = new Set([
  'InsufficientInstanceCapacity',
  'MaxSpotInstanceCountExceeded',
  'VcpuLimitExceeded',
  'UnfulfillableCapacity',
  'Unsupported',
  'InsufficientFreeAddressesInSubnet',
  'MaxFleetCountExceeded',
  'ReservationCapacityExceeded',
]);

export const SERVICE_LINKED_ROLE_CODE = 'AuthFailure.ServiceLinkedRoleCreationNotPermitted';
export const INSUFFICIENT_FREE_ADDRESSES_CODE = 'InsufficientFreeAddressesInSubnet';

const ALREADY_EXISTS_CODES: ReadonlySet<string> = new Set([
  'InvalidLaunchTemplateName.AlreadyExistsException',
  'EntityAlreadyExists',
]);

/** The codes an SDK error carries (name, and Code in query-compatible JSON). */
export function errorCodes(e: unknown): string[] {
  if (!(e instanceof Error)) return [];
  const out = [e.name];
  const code = (e as { Code?: unknown }).Code;
  if (typeof code === 'string' && code !== e.name) out.push(code);
  return out;
}

const hasCode = (e: unknown, codes: ReadonlySet<string>): boolean => errorCodes(e).some((c) => codes.has(c));
export const isNotFound = (e: unknown): boolean => hasCode(e, NOT_FOUND_CODES);
export const isAlreadyExists = (e: unknown): boolean => hasCode(e, ALREADY_EXISTS_CODES);
export const isLaunchTemplateNotFound = (e: unknown): boolean => hasCode(e, LAUNCH_TEMPLATE_NOT_FOUND_CODES);

export const isUnfulfillableCapacity = (code: string | undefined): boolean =>
  code !== undefined && UNFULFILLABLE_CAPACITY_CODES.has(code);

/** Capacity-like errors: when every CreateFleet error is one of these, the launch is InsufficientCapacity. */
export const isCapacityOrSlrCode = (code: string | undefined): boolean =>
  isUnfulfillableCapacity(code) || code === SERVICE_LINKED_ROLE_CODE;

/** Ordered (first match wins): a launch failure's code or message -> the Launched condition's reason. */
const REASONS: ReadonlyArray<readonly [RegExp, string]> = [
  [/^(UnauthorizedOperation|AccessDenied|AccessDeniedException|AuthFailure)$|not authorized/i, 'Unauthorized'],
  [/^InvalidLaunchTemplate(Id|Name)\.NotFound/, 'LaunchTemplateNotFound'],
  [/^InvalidAMIID\./, 'AMINotFound'],
  [/^MaxSpotInstanceCountExceeded$/, 'SpotQuotaExceeded'],
  [/^VcpuLimitExceeded$/, 'VCPULimitExceeded'],
  [/^MaxFleetCountExceeded$/, 'FleetQuotaExceeded'],
  [/^(RequestLimitExceeded|Throttling|ThrottlingException)$/, 'RequestLimitExceeded'],
  [/^InsufficientFreeAddressesInSubnet$/, 'InsufficientFreeAddresses'],
  [/^(InsufficientInstanceCapacity|UnfulfillableCapacity|ReservationCapacityExceeded)$/, 'InsufficientCapacity'],
  [/^InvalidSubnetID\./, 'SubnetNotFound'],
  [/^InvalidGroup\.NotFound$|^InvalidSecurityGroupID\./, 'SecurityGroupNotFound'],
  [/^InvalidParameter/, 'InvalidParameter'],
];

const DEFAULT_LAUNCH_FAILURE_REASON = 'LaunchFailed';

export function launchFailureReason(code: string | undefined, message = ''): string {
  for (const [re, reason] of REASONS)
    if ((code !== undefined && re.test(code)) || (re.flags.includes('i') && re.test(message))) return reason;
  return DEFAULT_LAUNCH_FAILURE_REASON;
}
