/**
 * The `photo-jobs` command of the client package (bin/packages.ts): `photo-jobs jobs …` and
 * `photo-jobs batches …`, the same commands as `npm run cli -- jobs …` in this repository.
 */
import { runClientCli } from './cli.ts';

process.exit(await runClientCli(process.argv.slice(2), 'photo-jobs'));
