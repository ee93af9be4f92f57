// Which instance types and offerings one launch may use: the AWS provider's launch-time filters. The rules live in
// the engine (engine/launch/filter.ts), so that the planner names the type a launch would get; this module keeps
// the launch path's names for them.
export {
  MAX_LAUNCH_INSTANCE_TYPES as MAX_INSTANCE_TYPES,
  selectLaunchCandidates as selectCandidates,
  type LaunchCandidate as Candidate,
} from '../../../../engine/index.ts';
