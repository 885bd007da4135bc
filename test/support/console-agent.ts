// The console's browser stand-in lives with the dev tools, where the fleet soak uses it too.
export * from '../../src/dev/console-agent';
