// The engine's public surface: the only module controller/, cli/ and bench/ import.
export * from './domain/types.ts';
export * from './domain/resources.ts';
export * from './domain/quantity.ts';
export * from './catalog/index.ts';
export * from './api/index.ts';
export { nextAfter, parseCron, scheduleActive, CronError, type CronResult, type CronSchedule } from './disruption/cron.ts';
