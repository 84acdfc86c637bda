// What a zip function's bundle imports for `node:process` (lib/constructs/handler-function.ts): the global
// process itself. Node's own ES module for it copies every property of process when first imported, and
// reading `process.stdout` and `process.stderr` opens both streams: 7-11M instructions (3-5%) of the cold
// start of a function with an AWS SDK client where they are pipes (the SDK imports `env` and `versions`
// from it), before anything is printed. Through a CommonJS module, the bundle reads each property when the
// code uses it, as `process.env` in the source does.
module.exports = process;
