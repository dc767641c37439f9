// Preloaded (`node --require`) into reference servers during tests: a `listen(port)` without a
// host binds every interface; default it to loopback so no test server is reachable from outside.
// A port may come as a number or as a string of digits (the TypeScript SDK's demo authorization
// server listens on `new URL(...).port`, a string).
const net = require("node:net");
const isPort = (value) => typeof value === "number" || (typeof value === "string" && /^\d+$/.test(value));
const originalListen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (isPort(args[0]) && (args.length === 1 || typeof args[1] === "function")) {
    args.splice(1, 0, "127.0.0.1");
  } else if (args[0] && typeof args[0] === "object" && args[0].port !== undefined && !args[0].host) {
    args[0] = { ...args[0], host: "127.0.0.1" };
  }
  return originalListen.apply(this, args);
};
