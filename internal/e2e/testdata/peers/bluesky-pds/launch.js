// launch.js starts an in-memory DID directory (PLC) and the reference Bluesky PDS, both on
// 127.0.0.1, for reelay's peer test (internal/e2e/blueskypds_test.go). The PDS takes its
// settings from the PDS_* environment variables (see @atproto/pds's config/env.ts); the test
// chooses PDS_PORT and the data folders. PDS_DID_PLC_URL is set here, to the PLC just started.
//
// When both serve, one line goes to stdout: {"plc":"http://127.0.0.1:…","pds":"http://localhost:…"}.
// The launcher ends when its stdin closes (the test ended, or died) or on SIGTERM.
'use strict'

const events = require('node:events')
const { PlcServer, Database: PlcDatabase } = require('@did-plc/server')
const pds = require('@atproto/pds')

// listen serves an express app on 127.0.0.1 only (PlcServer.start and PDS.start would listen
// on every interface).
async function listen(app, port) {
  const server = app.listen(port, '127.0.0.1')
  await events.once(server, 'listening')
  return server
}

async function main() {
  const plc = PlcServer.create({ db: PlcDatabase.mock() })
  const plcServer = await listen(plc.app, 0)
  const plcURL = `http://127.0.0.1:${plcServer.address().port}`
  process.env.PDS_DID_PLC_URL = plcURL

  const env = pds.readEnv()
  const server = await pds.PDS.create(pds.envToCfg(env), pds.envToSecrets(env))
  // What PDS.start does, on loopback.
  await server.ctx.sequencer.start()
  const pdsServer = await listen(server.app, server.ctx.cfg.service.port)
  pdsServer.keepAliveTimeout = 90000

  process.stdout.write(JSON.stringify({ plc: plcURL, pds: server.ctx.cfg.service.publicUrl }) + '\n')

  const stop = () => process.exit(0)
  process.stdin.on('end', stop)
  process.stdin.on('close', stop)
  process.stdin.resume()
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
}

main().catch((err) => {
  console.error('launch.js:', err)
  process.exit(1)
})
