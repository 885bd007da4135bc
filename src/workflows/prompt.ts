// The investigator's rules live with the context kernel (the model activity builds the request
// from the transcript log with them too); re-exported here for the workflow's modules.
export { SYSTEM_PROMPT } from '../context/system-prompt';
