// The private part of dialog::rc::Slave.
#pragma once

#include "dialog/rc/slave.h"
#include "ispublisher_p.h"
#include "transitionaccess_p.h"

#include <QElapsedTimer>
#include <QTimer>

namespace dialog::rc {

class SlavePrivate
{
public:
    SlavePrivate(Slave *q, const SlaveOptions &options);

    void onRequest(const Request &request);
    void onTransitionRequest(const Request &request);
    void onCommand(const Command &command);
    /// The controller's word that an operator took this process (@p owner, empty: released).
    void onOwnerRequest(const Request &request, const QString &owner);
    void publishIsState();
    /// Arms the time-out of transition @p t begun as @p generation (nothing without one).
    void armTimeout(Transition t, quint64 generation);

    Slave *const q;
    SlaveOptions options;
    std::unique_ptr<Client> client;
    std::unique_ptr<IsPublisher> is;
    std::unique_ptr<TransitionAccess> access;
    StateMachine machine;
    Service *state = nullptr;
    Service *log = nullptr;
    Service *status = nullptr;
    QHash<QString, std::function<void(const Command &)>> commands;
    QHash<QString, std::function<void(const Request &)>> served;
    /// The outcome of the transition in progress, bumped by every begin() and every end: stale
    /// completions (after a reset or a time-out) are ignored.
    quint64 generation = 0;
    Slave::Done finish; ///< the transition in progress' completion
    QTimer timeout;
    QElapsedTimer transitionTimer;
    qint64 lastDurationMs = 0;
    qint64 lastTransitionEndMs = 0;
    quint32 runNumber = 0;
    /// Who took this process (user\@host, told by its controller): its transitions then come from
    /// the controller alone, run-control commands from anyone else are refused.
    QString owner;
    QString ownerBy; ///< the controller that said so: its commands still pass
};

} // namespace dialog::rc
