import { forgetBootstrap } from "../../src/middleware/bootstrap";

// The files of the workers-first-request project test what an isolate's first request does (the
// bootstrap superuser is created then, once per isolate). They share one runtime, so before each
// file the isolate forgets that it ran the bootstrap, as a new one would: the file's first request
// is a first request again, against the empty database test/setup/fresh-storage.ts made.
forgetBootstrap();
