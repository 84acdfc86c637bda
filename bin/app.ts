import { buildApp } from '../lib/app.ts';

// The CLI decides which stacks to bundle (`aws:cdk:bundling-stacks`) and where the assembly goes.
buildApp().app.synth();
