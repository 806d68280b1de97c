#!/usr/bin/env node
// `npm run build`: the production build, stamped with the digest of its sources so that
// `npm start` and `npm test` reuse it instead of building again.
import { ensureBuild } from "./lib/bootstrap.mjs";

ensureBuild({ force: true });
