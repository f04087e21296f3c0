/* series.c - series made ready to draw: M4 downsampling (per pixel column:
 * first, min, max, last), which keeps the peak exactly, and stacking. */
#include <memprof/layout.h>

#include <math.h>

static size_t column_of(double x, double x0, double x1, size_t columns)
{
	double f;

	if (!columns || !(x > x0) || !(x1 > x0))
		return 0;
	f = (x - x0) / (x1 - x0) * (double)columns;
	return f >= (double)columns ? columns - 1 : (size_t)f;
}

size_t mp_series_column(double x, double x0, double x1, size_t columns)
{
	return column_of(x, x0, x1, columns);
}

/* Append the distinct indices of one column in ascending order. */
static size_t flush(size_t *out, size_t k, size_t first, size_t lo, size_t hi, size_t last)
{
	size_t v[4] = {first, lo, hi, last};

	/* sort four values (insertion), then drop repeats */
	for (int i = 1; i < 4; i++)
		for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
			size_t t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	for (int i = 0; i < 4; i++)
		if (i == 0 || v[i] != v[i - 1])
			out[k++] = v[i];
	return k;
}

size_t mp_series_m4(const double *x, const double *y, size_t n, double x0, double x1, size_t columns, size_t *out)
{
	size_t k = 0, col, first = 0, lo = 0, hi = 0;

	if (!n || !columns)
		return 0;
	col = column_of(x[0], x0, x1, columns);
	for (size_t i = 1; i <= n; i++) {
		size_t c = i < n ? column_of(x[i], x0, x1, columns) : (size_t)-1;
		if (c != col) {
			k = flush(out, k, first, lo, hi, i - 1);
			first = lo = hi = i;
			col = c;
			continue;
		}
		if (y[i] < y[lo])
			lo = i;
		if (y[i] > y[hi])
			hi = i;
	}
	return k;
}

static void widen(mp_column_range_t *c, double v)
{
	if (isnan(v))
		return;
	if (!c->has) {
		c->lo = c->hi = v;
		c->has = 1;
		return;
	}
	if (v < c->lo)
		c->lo = v;
	if (v > c->hi)
		c->hi = v;
}

void mp_series_columns(const double *x, const double *y, size_t n, double x0, double x1, size_t columns,
		       mp_column_range_t *out)
{
	double carry = NAN;
	size_t i = 0;

	for (size_t c = 0; c < columns; c++) {
		out[c].has = 0;
		out[c].lo = out[c].hi = 0;
		widen(&out[c], carry); /* the value held since the column to the left */
		for (; i < n && column_of(x[i], x0, x1, columns) == c; i++) {
			widen(&out[c], y[i]);
			carry = y[i];
		}
	}
}

void mp_series_stack(const double *const *layers, size_t nlayers, size_t n, double *tops)
{
	for (size_t i = 0; i < n; i++) {
		double sum = 0;
		for (size_t l = 0; l < nlayers; l++) {
			sum += layers[l][i];
			tops[l * n + i] = sum;
		}
	}
}
