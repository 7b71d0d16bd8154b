#!/usr/bin/env node
// The `mdq` binary. A committed file rather than dist/src/main.js itself: npm links a binary only
// when its target exists at install time, and the compiled entry point exists only after a build.
import "../dist/src/main.js";
