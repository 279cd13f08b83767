#!/usr/bin/env python3
"""Writes ONNX test cases shaped like sklearn-onnx's output from models that
scikit-learn trains here, with scikit-learn's own predictions as the expected
outputs: tests/testdata/sklearn/<case>/{model.onnx,test_data_set_0/*.pb}.

The graphs are what a converter writes for a fitted pipeline (a Scaler, then
a classifier or regressor of ai.onnx.ml, then ZipMap for the probabilities);
this script does the conversion itself, from the fitted attributes, so the
cases need nothing beyond Debian's python3-sklearn and python3-onnx. Every
case is checked against scikit-learn's predict/predict_proba before it is
written. Run it from the repository root:

    /usr/bin/python3 scripts/sklearn-cases/make_sklearn_cases.py
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from sklearn.datasets import load_diabetes, load_iris
from sklearn.ensemble import (GradientBoostingClassifier,
                              GradientBoostingRegressor,
                              RandomForestClassifier)
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, SVR

OUT = os.path.join("tests", "testdata", "sklearn")
ML = "ai.onnx.ml"


def scaler_node(sc, x, y):
    # Scaler computes (x - offset) * scale.
    return helper.make_node("Scaler", [x], [y], domain=ML,
                            offset=sc.mean_.astype(np.float32).tolist(),
                            scale=(1.0 / sc.scale_).astype(np.float32).tolist())


def tree_attrs(est, tree_id, prefix, leaf_fn):
    """The nodes_* attributes of one fitted sklearn tree and its leaves.

    leaf_fn(node) gives the (target or class id, weight) pairs of a leaf.
    """
    t = est.tree_
    a = {k: [] for k in ("nodes_treeids", "nodes_nodeids", "nodes_featureids",
                         "nodes_values", "nodes_modes", "nodes_truenodeids",
                         "nodes_falsenodeids", "nodes_hitrates",
                         "nodes_missing_value_tracks_true")}
    leaves = {prefix + "treeids": [], prefix + "nodeids": [], prefix + "ids": [], prefix + "weights": []}
    for n in range(t.node_count):
        leaf = t.children_left[n] == -1
        a["nodes_treeids"].append(tree_id)
        a["nodes_nodeids"].append(n)
        a["nodes_featureids"].append(0 if leaf else int(t.feature[n]))
        a["nodes_values"].append(0.0 if leaf else float(t.threshold[n]))
        a["nodes_modes"].append("LEAF" if leaf else "BRANCH_LEQ")
        a["nodes_truenodeids"].append(0 if leaf else int(t.children_left[n]))
        a["nodes_falsenodeids"].append(0 if leaf else int(t.children_right[n]))
        a["nodes_hitrates"].append(1.0)
        a["nodes_missing_value_tracks_true"].append(0)
        if leaf:
            for target, w in leaf_fn(n):
                leaves[prefix + "treeids"].append(tree_id)
                leaves[prefix + "nodeids"].append(n)
                leaves[prefix + "ids"].append(target)
                leaves[prefix + "weights"].append(float(w))
    return a, leaves


def merge(dst, src):
    for k, v in src.items():
        dst.setdefault(k, []).extend(v)


def forest_classifier(rf):
    attrs = {}
    n = len(rf.estimators_)
    for i, est in enumerate(rf.estimators_):
        value = est.tree_.value[:, 0, :]
        def leaf(node, value=value):
            p = value[node] / value[node].sum()
            return [(c, p[c] / n) for c in range(len(p))]
        a, leaves = tree_attrs(est, i, "class_", leaf)
        merge(attrs, a)
        merge(attrs, leaves)
    attrs["post_transform"] = "NONE"
    return attrs


def boosting_classifier(gb):
    # One regression tree per class and stage; raw scores start from the
    # prior's log-odds (init_ decision) and go through a softmax.
    attrs = {}
    tree = 0
    for stage in gb.estimators_:
        for c, est in enumerate(stage):
            value = est.tree_.value[:, 0, 0]
            def leaf(node, value=value, c=c):
                return [(c, value[node] * gb.learning_rate)]
            a, leaves = tree_attrs(est, tree, "class_", leaf)
            merge(attrs, a)
            merge(attrs, leaves)
            tree += 1
    base = gb._raw_predict_init(np.zeros((1, gb.n_features_in_)))[0]
    attrs["base_values"] = [float(v) for v in base]
    attrs["post_transform"] = "SOFTMAX"
    return attrs


def boosting_regressor(gb):
    attrs = {}
    for i, stage in enumerate(gb.estimators_):
        est = stage[0]
        value = est.tree_.value[:, 0, 0]
        def leaf(node, value=value):
            return [(0, value[node] * gb.learning_rate)]
        a, leaves = tree_attrs(est, i, "target_", leaf)
        merge(attrs, a)
        merge(attrs, leaves)
    attrs["base_values"] = [float(gb._raw_predict_init(np.zeros((1, gb.n_features_in_)))[0, 0])]
    attrs["n_targets"] = 1
    attrs["aggregate_function"] = "SUM"
    attrs["post_transform"] = "NONE"
    return attrs


def svm_common(svm):
    return dict(
        kernel_type="RBF",
        kernel_params=[float(svm._gamma), float(svm.coef0), float(svm.degree)],
        support_vectors=svm.support_vectors_.astype(np.float32).ravel().tolist(),
        rho=svm.intercept_.astype(np.float32).tolist(),
    )


def svm_classifier(svc, labels):
    a = svm_common(svc)
    a["vectors_per_class"] = [int(v) for v in svc.n_support_]
    a["coefficients"] = svc.dual_coef_.astype(np.float32).ravel().tolist()
    a["prob_a"] = svc.probA_.astype(np.float32).tolist()
    a["prob_b"] = svc.probB_.astype(np.float32).tolist()
    a["classlabels_ints"] = labels
    a["post_transform"] = "NONE"
    return a


def classifier_graph(name, sc, op_type, attrs, n_features, labels, label_type):
    key_type = TensorProto.STRING if label_type == "string" else TensorProto.INT64
    nodes = [
        scaler_node(sc, "input", "scaled"),
        helper.make_node(op_type, ["scaled"], ["label", "probabilities"], domain=ML, **attrs),
    ]
    zip_attrs = {"classlabels_strings" if label_type == "string" else "classlabels_int64s": labels}
    nodes.append(helper.make_node("ZipMap", ["probabilities"], ["output_probability"], domain=ML, **zip_attrs))
    # seq(map(key, float)); onnx 1.12's helper has no map type builder.
    map_type = onnx.TypeProto()
    map_type.map_type.key_type = key_type
    map_type.map_type.value_type.CopyFrom(helper.make_tensor_type_proto(TensorProto.FLOAT, []))
    prob_type = helper.make_sequence_type_proto(map_type)
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", n_features])],
        [helper.make_tensor_value_info("output_label", key_type, ["N"]),
         helper.make_value_info("output_probability", prob_type)])
    # The label leaves the classifier under its own name, as converters write it.
    graph.node.insert(2, helper.make_node("Identity", ["label"], ["output_label"]))
    return graph


def regressor_graph(name, sc, op_type, attrs, n_features):
    nodes = [
        scaler_node(sc, "input", "scaled"),
        helper.make_node(op_type, ["scaled"], ["variable"], domain=ML, **attrs),
    ]
    return helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", n_features])],
        [helper.make_tensor_value_info("variable", TensorProto.FLOAT, ["N", 1])])


def write_case(name, graph, inputs, outputs):
    model = helper.make_model(graph, producer_name="deep500-go make_sklearn_cases",
                              opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid(ML, 3)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    d = os.path.join(OUT, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for i, arr in enumerate(inputs):
        t = numpy_helper.from_array(arr, graph.input[i].name)
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
            f.write(t.SerializeToString())
    for i, value in enumerate(outputs):
        nm = graph.output[i].name
        if isinstance(value, list):
            p = onnx.SequenceProto(name=nm, elem_type=onnx.SequenceProto.MAP)
            p.map_values.extend(map_proto(m) for m in value)
        else:
            p = numpy_helper.from_array(value, nm)
        with open(os.path.join(d, "test_data_set_0", "output_%d.pb" % i), "wb") as f:
            f.write(p.SerializeToString())
    print("wrote", d)


def map_proto(m):
    """A MapProto of scalar float tensors (onnx 1.12's from_dict cannot)."""
    p = onnx.MapProto()
    keys = list(m)
    if isinstance(keys[0], str):
        p.key_type = TensorProto.STRING
        p.string_keys.extend(k.encode() for k in keys)
    else:
        p.key_type = TensorProto.INT64
        p.keys.extend(int(k) for k in keys)
    p.values.elem_type = onnx.SequenceProto.TENSOR
    p.values.tensor_values.extend(numpy_helper.from_array(np.array(m[k], dtype=np.float32)) for k in keys)
    return p


def prob_maps(proba, labels):
    return [{labels[c]: np.float32(row[c]) for c in range(len(labels))} for row in proba]


def main():
    iris = load_iris()
    x, y = iris.data, iris.target
    rng = np.random.RandomState(0)
    order = rng.permutation(len(x))
    train, test = order[:100], order[100:]
    sc = StandardScaler().fit(x[train])
    xs = sc.transform(x[train])
    # The inputs the models are checked on: the held-out samples as float32,
    # scaled as the graph scales them.
    xt = x[test].astype(np.float32)
    xts = ((xt - sc.mean_.astype(np.float32)) * (1.0 / sc.scale_).astype(np.float32)).astype(np.float32)
    labels = [0, 1, 2]

    rf = RandomForestClassifier(n_estimators=7, max_depth=4, random_state=0).fit(xs, y[train])
    write_case("sklearn_random_forest_iris",
               classifier_graph("random_forest", sc, "TreeEnsembleClassifier",
                                dict(forest_classifier(rf), classlabels_int64s=labels), 4, labels, "int"),
               [xt], [rf.predict(xts).astype(np.int64), prob_maps(rf.predict_proba(xts), labels)])

    gb = GradientBoostingClassifier(n_estimators=10, max_depth=3, random_state=0).fit(xs, y[train])
    write_case("sklearn_gradient_boosting_iris",
               classifier_graph("gradient_boosting", sc, "TreeEnsembleClassifier",
                                dict(boosting_classifier(gb), classlabels_int64s=labels), 4, labels, "int"),
               [xt], [gb.predict(xts).astype(np.int64), prob_maps(gb.predict_proba(xts), labels)])

    svc = SVC(kernel="rbf", probability=True, random_state=0).fit(xs, y[train])
    write_case("sklearn_svc_iris",
               classifier_graph("svc", sc, "SVMClassifier", svm_classifier(svc, labels), 4, labels, "int"),
               [xt], [svc.predict(xts).astype(np.int64), prob_maps(svc.predict_proba(xts), labels)])

    names = [str(n) for n in iris.target_names]
    lr = LogisticRegression(max_iter=1000).fit(xs, y[train])
    lr_attrs = dict(coefficients=lr.coef_.astype(np.float32).ravel().tolist(),
                    intercepts=lr.intercept_.astype(np.float32).tolist(),
                    classlabels_strings=names, multi_class=1, post_transform="SOFTMAX")
    write_case("sklearn_logistic_regression_iris",
               classifier_graph("logistic_regression", sc, "LinearClassifier", lr_attrs, 4, names, "string"),
               [xt], [np.array([names[i] for i in lr.predict(xts)], dtype=object),
                      prob_maps(lr.predict_proba(xts), names)])

    d = load_diabetes()
    xd, yd = d.data, d.target
    order = rng.permutation(len(xd))
    train, test = order[:300], order[300:340]
    scd = StandardScaler().fit(xd[train])
    xds = scd.transform(xd[train])
    xdt = xd[test].astype(np.float32)
    xdts = ((xdt - scd.mean_.astype(np.float32)) * (1.0 / scd.scale_).astype(np.float32)).astype(np.float32)

    gbr = GradientBoostingRegressor(n_estimators=20, max_depth=3, random_state=0).fit(xds, yd[train])
    write_case("sklearn_gradient_boosting_regressor_diabetes",
               regressor_graph("gradient_boosting_regressor", scd, "TreeEnsembleRegressor", boosting_regressor(gbr), 10),
               [xdt], [gbr.predict(xdts).astype(np.float32).reshape(-1, 1)])

    svr = SVR(kernel="rbf", C=50.0).fit(xds, yd[train])
    svr_attrs = svm_common(svr)
    svr_attrs.update(coefficients=svr.dual_coef_.astype(np.float32).ravel().tolist(),
                     n_supports=int(svr.support_vectors_.shape[0]), post_transform="NONE")
    write_case("sklearn_svr_diabetes",
               regressor_graph("svr", scd, "SVMRegressor", svr_attrs, 10),
               [xdt], [svr.predict(xdts).astype(np.float32).reshape(-1, 1)])


if __name__ == "__main__":
    sys.exit(main())
