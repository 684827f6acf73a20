#include "dialog/rc/statemachine.h"

#include <QHash>
#include <array>

namespace dialog::rc {

namespace {

struct Row
{
    Transition transition;
    const char *name;
    const char *activity;
};

constexpr std::array<Row, 7> kTransitions{{
    {Transition::Configure, "configure", "Configuring"},
    {Transition::Start, "start", "Starting"},
    {Transition::Pause, "pause", "Pausing"},
    {Transition::Resume, "resume", "Resuming"},
    {Transition::Stop, "stop", "Stopping"},
    {Transition::Unconfigure, "unconfigure", "Unconfiguring"},
    {Transition::Reset, "reset", "Resetting"},
}};

constexpr std::array<const char *, 5> kStates{{"Initial", "Configured", "Running", "Paused", "Error"}};

} // namespace

QString stateName(State s)
{
    return QString::fromLatin1(kStates[size_t(s)]);
}

QString transitionName(Transition t)
{
    return QString::fromLatin1(kTransitions[size_t(t)].name);
}

QString transitionActivity(Transition t)
{
    return QString::fromLatin1(kTransitions[size_t(t)].activity);
}

std::optional<State> stateFromName(const QString &name)
{
    for (size_t i = 0; i < kStates.size(); ++i)
        if (name.compare(QLatin1String(kStates[i]), Qt::CaseInsensitive) == 0)
            return State(i);
    return std::nullopt;
}

std::optional<Transition> transitionFromName(const QString &name)
{
    for (const Row &r : kTransitions)
        if (name.trimmed().compare(QLatin1String(r.name), Qt::CaseInsensitive) == 0)
            return r.transition;
    return std::nullopt;
}

QStringList allTransitionNames()
{
    QStringList out;
    for (const Row &r : kTransitions)
        out << QString::fromLatin1(r.name);
    return out;
}

namespace {

// The state @p t leads to from @p from; std::nullopt if it is illegal there.
std::optional<State> next(State from, Transition t)
{
    std::optional<State> to;
    switch (t) {
    case Transition::Configure:
        if (from == State::Initial)
            to = State::Configured;
        break;
    case Transition::Start:
        if (from == State::Configured)
            to = State::Running;
        break;
    case Transition::Pause:
        if (from == State::Running)
            to = State::Paused;
        break;
    case Transition::Resume:
        if (from == State::Paused)
            to = State::Running;
        break;
    case Transition::Stop:
        if (from == State::Running || from == State::Paused)
            to = State::Configured;
        break;
    case Transition::Unconfigure:
        if (from == State::Configured)
            to = State::Initial;
        break;
    case Transition::Reset:
        to = State::Initial;
        break;
    }
    return to;
}

} // namespace

Status target(State from, Transition t, State *out)
{
    const std::optional<State> to = next(from, t);
    if (!to) {
        QStringList legal;
        for (Transition l : legalTransitions(from))
            legal << transitionName(l);
        return Status(Status::Code::BadRequest,
                      QStringLiteral("illegal transition '%1' in state %2 (legal: %3)")
                          .arg(transitionName(t), stateName(from), legal.join(QStringLiteral(", "))));
    }
    if (out)
        *out = *to;
    return {};
}

QList<Transition> legalTransitions(State s)
{
    QList<Transition> out;
    for (const Row &r : kTransitions)
        if (next(s, r.transition))
            out << r.transition;
    return out;
}

QList<Transition> pathFromInitial(State s)
{
    switch (s) {
    case State::Configured:
        return {Transition::Configure};
    case State::Running:
        return {Transition::Configure, Transition::Start};
    case State::Paused:
        return {Transition::Configure, Transition::Start, Transition::Pause};
    case State::Initial:
    case State::Error:
        break;
    }
    return {};
}

QList<Transition> path(State from, State to)
{
    if (from == to || to == State::Error)
        return {};
    if (from == State::Error)
        return QList<Transition>{Transition::Reset} + pathFromInitial(to);
    // Breadth-first over the (five) states, without Reset.
    QList<State> queue{from};
    QHash<int, QList<Transition>> routes{{int(from), {}}};
    while (!queue.isEmpty()) {
        const State s = queue.takeFirst();
        for (Transition t : legalTransitions(s)) {
            if (t == Transition::Reset)
                continue;
            const State reached = *next(s, t);
            if (routes.contains(int(reached)))
                continue;
            routes.insert(int(reached), routes.value(int(s)) + QList<Transition>{t});
            if (reached == to)
                return routes.value(int(reached));
            queue << reached;
        }
    }
    return {};
}

Status StateMachine::begin(Transition t)
{
    if (m_pending && t != Transition::Reset)
        return Status(Status::Code::BadRequest,
                      QStringLiteral("busy: '%1' is in progress").arg(transitionName(*m_pending)));
    if (Status s = target(m_state, t); !s.isOk())
        return s;
    m_pending = t;
    return {};
}

bool StateMachine::finish()
{
    if (!m_pending)
        return false;
    target(m_state, *m_pending, &m_state);
    m_last = m_pending;
    m_pending.reset();
    m_error.clear();
    return true;
}

void StateMachine::fail(const QString &why)
{
    if (m_pending)
        m_last = m_pending;
    m_pending.reset();
    m_state = State::Error;
    m_error = why;
}

bool StateMachine::restore(State s)
{
    if ((m_state != State::Error && m_state != State::Initial) || s == State::Error || m_pending)
        return false;
    m_state = s;
    m_error.clear();
    return true;
}

} // namespace dialog::rc
