#include "dialog/httpauth.h"

namespace dialog::http {

bool constantTimeEquals(const QByteArray &a, const QByteArray &b)
{
    // Every byte of the longer one is looked at whatever the content: the time tells the length
    // at most, not how much of the token was right.
    const qsizetype n = qMax(a.size(), b.size());
    unsigned char diff = a.size() == b.size() ? 0 : 1;
    for (qsizetype i = 0; i < n; ++i)
        diff |= (i < a.size() ? uchar(a[i]) : 0) ^ (i < b.size() ? uchar(b[i]) : 0);
    return diff == 0;
}

bool bearerMatches(const QByteArray &authorization, const QByteArray &token)
{
    const QByteArray v = authorization.trimmed();
    const int space = v.indexOf(' ');
    if (space < 0 || v.left(space).compare("bearer", Qt::CaseInsensitive) != 0)
        return false;
    return constantTimeEquals(v.mid(space + 1).trimmed(), token);
}

} // namespace dialog::http
