// Preloaded (`node -r`) to stand for a platform where onnxruntime-node cannot load: requiring it
// throws as a missing binary does.
const Module = require('node:module');
const load = Module._load;
Module._load = function (request, ...rest) {
  if (request === 'onnxruntime-node') throw new Error('Cannot find module onnxruntime_binding.node (simulated)');
  return load.call(this, request, ...rest);
};
