// The worker's workflowsPath: every workflow casework runs.
export { investigation } from './investigation';
export { retention } from './retention';
