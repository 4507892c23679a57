export const log = (line) => console.log(`${new Date().toISOString().slice(11, 19)} ${line}`);

export const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
