/** `npm start`: the local stack is not built yet (see the local-stack issue). */
console.log("llm-edge-router: `npm start` is not built yet; run `npm test` for the test suite.");
