// myslave: the example slave. `dialogctl up` starts it from a partition entry
//   {"name": "HV1", "program": "/path/to/myslave", "args": ["--channels", "4"]}
// with the arguments of every slave (--name, --master, --is-types, …) before its own.
#include "hvslave.h"

#include <QCoreApplication>
#include <QDir>

int main(int argc, char *argv[])
{
    HvConfig config;
    QString typesFile;
    dialog::rc::SlaveProgram program;
    program.program = QStringLiteral("myslave");
    program.description = QStringLiteral("An example run-control slave: a high-voltage supply.");
    program.kind = QStringLiteral("hv");
    program.addOptions = [&](dialog::OptionTable &t) {
        addHvOptions(t, config);
        t.add(dialog::Option::text(QStringLiteral("types-file"), QStringLiteral("file"),
                                   QStringLiteral("The IS type of DAQ.<name> (default: hvsupply.xml beside "
                                                  "the program)."),
                                   &typesFile));
    };
    program.create = [&](const dialog::rc::SlaveOptions &options, std::unique_ptr<dialog::rc::Slave> *out) {
        auto slave = std::make_unique<HvSlave>(options, config);
        const QString types =
            typesFile.isEmpty()
                ? QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("hvsupply.xml"))
                : typesFile;
        if (const dialog::Status s = slave->addIsTypes(types); !s.isOk())
            return s;
        *out = std::move(slave);
        return dialog::Status();
    };
    return dialog::rc::runSlave(argc, argv, program);
}
