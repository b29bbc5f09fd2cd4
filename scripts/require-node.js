// Stops `npm install`, `npm start` and `npm test` on a Node older than the project's floor, with a
// message saying how to get the right one, rather than a crash deep inside a module. Plain
// JavaScript, no dependency: it runs before anything is installed, on whatever Node the machine has.
const MINIMUM = 24;
const major = Number(process.versions.node.split('.')[0]);
if (major < MINIMUM) {
  console.error(
    `This project needs Node ${MINIMUM} or newer; you have ${process.version}.\n` +
      `\`bash scripts/node.sh ${MINIMUM}\` installs it into .cache/node and prints the folder: put its bin/ first on PATH ` +
      `and set npm_config_nodedir to it (or use nvm: .nvmrc says ${MINIMUM}).`,
  );
  process.exit(1);
}
