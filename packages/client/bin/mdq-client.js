#!/usr/bin/env node
// The `mdq-client` binary. A committed file rather than dist/src/cli/main.js itself: npm links a
// binary only when its target exists at install time, and the compiled one exists only after a build.
import "../dist/src/cli/main.js";
