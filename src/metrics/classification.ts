/**
 * Task 3.1 (sign of the community score) metrics with scikit-learn 1.6 semantics, over
 * the valid (true, predicted) pairs only. The original scripts disagree on F1, so each
 * variant is its own function named after the script that computes it (spec §2.1.6).
 */
import { numpyMean } from './numpy-sum.js';

export type SignLabel = 'positive' | 'negative';

export interface ClassificationScores {
  count: number;
  accuracy: number;
  f1: number;
  mcc: number;
}

/** sklearn `accuracy_score`. */
export function accuracy(truth: readonly string[], predicted: readonly string[]): number {
  checkPairs(truth, predicted);
  let correct = 0;
  for (let i = 0; i < truth.length; i++) if (truth[i] === predicted[i]) correct++;
  return correct / truth.length;
}

/**
 * sklearn binary `f1_score(pos_label=positive, zero_division=0)`: 2tp / (2tp + fp + fn),
 * 0 when nothing is positive in either list. 3.1/GPT.py (labels mapped to 1/0, positive = 1)
 * and 3.1/Claude.py (pos_label "positive") both compute this.
 */
export function binaryF1(truth: readonly string[], predicted: readonly string[], positive = 'positive'): number {
  checkPairs(truth, predicted);
  let tp = 0;
  let trueSum = 0;
  let predSum = 0;
  for (let i = 0; i < truth.length; i++) {
    const t = truth[i] === positive;
    const p = predicted[i] === positive;
    if (t) trueSum++;
    if (p) predSum++;
    if (t && p) tp++;
  }
  const denominator = trueSum + predSum;
  return denominator === 0 ? 0 : (2 * tp) / denominator;
}

/** sklearn `f1_score(average='weighted')`: per-label F1 weighted by true support. */
export function weightedF1(truth: readonly string[], predicted: readonly string[]): number {
  checkPairs(truth, predicted);
  const labels = [...new Set([...truth, ...predicted])].sort();
  let weighted = 0;
  let support = 0;
  for (const label of labels) {
    const trueSum = truth.filter((t) => t === label).length;
    weighted += binaryF1(truth, predicted, label) * trueSum;
    support += trueSum;
  }
  return support === 0 ? 0 : weighted / support;
}

/** sklearn `matthews_corrcoef` (multiclass form, float64 as sklearn computes it); 0 when undefined. */
export function matthewsCorrelation(truth: readonly string[], predicted: readonly string[]): number {
  checkPairs(truth, predicted);
  const labels = [...new Set([...truth, ...predicted])].sort();
  const index = new Map(labels.map((label, i) => [label, i]));
  const k = labels.length;
  const tSum = new Float64Array(k);
  const pSum = new Float64Array(k);
  let correct = 0;
  for (let i = 0; i < truth.length; i++) {
    tSum[index.get(truth[i]!)!]!++;
    pSum[index.get(predicted[i]!)!]!++;
    if (truth[i] === predicted[i]) correct++;
  }
  const n = truth.length;
  let dotTP = 0;
  let dotPP = 0;
  let dotTT = 0;
  for (let j = 0; j < k; j++) {
    dotTP += tSum[j]! * pSum[j]!;
    dotPP += pSum[j]! * pSum[j]!;
    dotTT += tSum[j]! * tSum[j]!;
  }
  const covTP = correct * n - dotTP;
  const covPP = n * n - dotPP;
  const covTT = n * n - dotTT;
  if (covPP * covTT === 0) return 0;
  return covTP / Math.sqrt(covTT * covPP);
}

/** 3.1/GPT.py and 3.1/Claude.py: accuracy, binary F1 (positive), MCC. */
export function signScoresApi(truth: readonly string[], predicted: readonly string[]): ClassificationScores {
  return { count: truth.length, accuracy: accuracy(truth, predicted), f1: binaryF1(truth, predicted), mcc: matthewsCorrelation(truth, predicted) };
}

/**
 * LogEval3.1: weighted F1; a group whose true labels hold a single class gets binary F1
 * with that class as the positive label and MCC 0 (spec §2.1.6).
 */
export function signScoresLogEval(truth: readonly string[], predicted: readonly string[]): ClassificationScores {
  const classes = new Set(truth);
  if (classes.size === 1) {
    const only = [...classes][0]!;
    return { count: truth.length, accuracy: accuracy(truth, predicted), f1: binaryF1(truth, predicted, only), mcc: 0 };
  }
  return { count: truth.length, accuracy: accuracy(truth, predicted), f1: weightedF1(truth, predicted), mcc: matthewsCorrelation(truth, predicted) };
}

export interface RegressionScores {
  count: number;
  mse: number;
  rmse: number;
  mae: number;
}

/** Task 3.2: sklearn `mean_squared_error`, its square root, `mean_absolute_error` (numpy pairwise means). */
export function regressionScores(truth: readonly number[], predicted: readonly number[]): RegressionScores {
  if (truth.length !== predicted.length) throw new RangeError('truth and predictions differ in length');
  if (truth.length === 0) throw new RangeError('no pairs to score');
  const squared = new Float64Array(truth.length);
  const absolute = new Float64Array(truth.length);
  for (let i = 0; i < truth.length; i++) {
    const diff = truth[i]! - predicted[i]!;
    squared[i] = diff * diff;
    absolute[i] = Math.abs(predicted[i]! - truth[i]!);
  }
  const mse = numpyMean(squared);
  return { count: truth.length, mse, rmse: Math.sqrt(mse), mae: numpyMean(absolute) };
}

function checkPairs(truth: readonly string[], predicted: readonly string[]): void {
  if (truth.length !== predicted.length) throw new RangeError('truth and predictions differ in length');
  if (truth.length === 0) throw new RangeError('no pairs to score');
}
