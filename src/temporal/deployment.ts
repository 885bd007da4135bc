import type { WorkerDeploymentOptions } from '@temporalio/worker';
import { ConfigError, type Config } from '../config';

// Worker Versioning: how workflow code is rolled out while investigations are in flight. Each
// worker names its Worker Deployment and the build id of the code it runs; the deployment's
// current version says which build new workflow tasks go to.
//
// The investigation is AUTO_UPGRADE, not PINNED: a case can wait days on a person deciding a
// refund, or a customer replying. Pinned, every old build would have to keep a worker polling
// until its last waiting case closed, possibly for weeks; auto-upgrade moves a waiting case to the
// current build at its next workflow task, so old workers can be retired once the rollout is
// done. The price is that every build must replay every older build's histories: changes go
// behind patched() (the replay test holds recorded histories to it), and a patch is removed only
// after the drain procedure in docs/deploy.md says the builds that recorded it are gone.

/**
 * The versioning behaviour of the Investigation workflow (the only workflow type casework runs),
 * given as the worker's default. It is not declared on the workflow function itself: an
 * unversioned worker (no deployment configured) fails workflow tasks of a workflow that declares
 * one.
 */
export const INVESTIGATION_VERSIONING = 'AUTO_UPGRADE' as const;

/** The worker's deployment options from configuration, or undefined for an unversioned worker. */
export function deploymentOptions(config: Pick<Config, 'CASEWORK_DEPLOYMENT_NAME' | 'CASEWORK_BUILD_ID'>): WorkerDeploymentOptions | undefined {
  const name = config.CASEWORK_DEPLOYMENT_NAME;
  const buildId = config.CASEWORK_BUILD_ID;
  if (!name && !buildId) return undefined;
  if (!name) throw new ConfigError('CASEWORK_DEPLOYMENT_NAME is required when CASEWORK_BUILD_ID is set (Worker Versioning needs both)');
  if (!buildId) throw new ConfigError('CASEWORK_BUILD_ID is required when CASEWORK_DEPLOYMENT_NAME is set (Worker Versioning needs both)');
  return { version: { deploymentName: name, buildId }, useWorkerVersioning: true, defaultVersioningBehavior: INVESTIGATION_VERSIONING };
}
