// The protocol side of libdialog that the Control Server daemon (controlserver/) is built on: the
// one internal header a daemon may include. Every other daemon uses the public API only.
//
// The Control Server is not a client of the directory, it is the directory: it speaks the control
// protocol itself, on a transport of its own, and publishes its services without a dialog::Client.
// What it uses of libdialog's internals is therefore gathered here, and nothing else:
//
// - the transport (transport_p.h): net::Transport (listen, outbox(), send(), answer(), the control
//   and data sinks and the direct route for reader threads), net::Inbound / net::InboundBatch
//   (one frame as read, with the peer that sent it), net::Endpoint, net::PeerInfo / net::PeerPtr,
//   net::OutboxPtr, net::TransportOptions and net::applySecurity();
// - the control messages (control_p.h): the wire::* protobuf messages, controlFrame() and
//   parseControl(), namesOf(), qs() / ss(), and wire_format::Type, typeName();
// - the data frames it relays (payload_p.h): encodeCommandFrame(), encodeReplyFrame(),
//   prepareData(), MaxNameLength;
// - the provider side of a service (servicestate_p.h): ServiceState, Subscriber, ServiceStatePtr,
//   so that it publishes DIALOG.Directory, DIALOG.Statistics and its message log as any provider
//   does, to subscribers it tracks itself;
// - ReadLocker / WriteLocker (rwlock_p.h): the command routes are read by reader threads.
//
// Not installed: these are the wire protocol's generated classes and the transport's internals,
// which change with the library and carry no ABI promise. The Control Server is built in the same
// tree as libdialog (through the dialog::private target); a program outside it talks to a Control
// Server through dialog::Client like any process.
#pragma once

#include "control_p.h"
#include "payload_p.h"
#include "rwlock_p.h"
#include "servicestate_p.h"
#include "transport_p.h"
