/* airlock.h: every public header of libairlock. */
#ifndef AIRLOCK_H
#define AIRLOCK_H

#include "airlock/common.h"
#include "airlock/error.h"
#include "airlock/buf.h"
#include "airlock/clock.h"
#include "airlock/fs.h"
#include "airlock/log.h"
#include "airlock/digest.h"
#include "airlock/ref.h"
#include "airlock/http.h"
#include "airlock/auth.h"
#include "airlock/registry.h"
#include "airlock/regconf.h"
#include "airlock/oci.h"
#include "airlock/store.h"
#include "airlock/release.h"
#include "airlock/imageset.h"
#include "airlock/kres.h"
#include "airlock/transfer.h"
#include "airlock/mirror.h"
#include "airlock/mirror_plan.h"
#include "airlock/delete.h"
#include "airlock/pgp.h"
#include "airlock/graph.h"
#include "airlock/kube.h"
#include "airlock/update.h"
#include "airlock/pack.h"
#include "airlock/cosign.h"
#include "airlock/serve.h"

#endif
